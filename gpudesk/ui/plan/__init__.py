"""The Plan tab (:mod:`.view`): a fit page (:mod:`.fit_page`, its form in
:mod:`.fit_form`) and a cost page (:mod:`.cost_page`), sharing :mod:`.forms`."""

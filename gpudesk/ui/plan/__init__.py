"""The Plan tab (:mod:`.view`): a fit page (:mod:`.fit_page`, its form in :mod:`.fit_form`,
its results in :mod:`.fit_results`), a speed page (:mod:`.speed_page`, built on
:mod:`.speed_page_base`, :mod:`.speed_measured`, :mod:`.speed_results` and
:mod:`.speed_serving`, its form in :mod:`.speed_form`) and a cost page
(:mod:`.cost_page`), sharing :mod:`.forms`."""

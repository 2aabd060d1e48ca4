"""Qt painting shared by the window and the PDF report: charts, colours, the application.

The only package below :mod:`gpudesk.ui` that imports Qt (with
:mod:`gpudesk.report.pdf`). The arrows run ``ui -> report -> render`` and
``ui -> render``, never back: nothing here imports :mod:`gpudesk.ui` or
:mod:`gpudesk.report`, so it knows no widget and no theme; callers pass
``dark`` themselves (``pyproject.toml``'s import-linter contracts check it).

The numbers behind every chart come from :mod:`gpudesk.compare`; these modules
only draw them. :mod:`.paint` paints a chart into any ``QPainter`` (the PDF
report), :mod:`.export` writes PNG/SVG files, :mod:`.app` makes the
``QApplication`` (offscreen when there is no display).
"""

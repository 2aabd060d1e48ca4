"""Compare charts: radar, price/performance scatter, bars, and their export.

The numbers behind every chart come from :mod:`gpudesk.compare`; these modules
only draw them. :mod:`.render` paints a chart into any ``QPainter`` (the PDF
report), :mod:`.export` writes PNG/SVG files.
"""

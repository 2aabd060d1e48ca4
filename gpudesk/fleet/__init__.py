"""The fleet survey: every node of a Ray cluster detected (and benchmarked) in place.

Only :mod:`gpudesk.fleet.survey` imports Ray (the optional ``fleet``
extra); the survey document, its checks and the node task are plain Python.
"""

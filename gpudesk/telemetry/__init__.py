"""Live readings of every GPU, one field set for every vendor (issue 44).

Read by ``gpudesk exporter`` (Prometheus ``/metrics``), ``gpudesk monitor`` (a
terminal view) and the GUI's monitor, from the same sources: NVML, amdgpu and
Intel i915/xe sysfs/hwmon, and what a Mac gives without root. Qt-free.
"""

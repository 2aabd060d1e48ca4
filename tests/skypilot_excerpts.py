"""Verbatim excerpts of SkyPilot catalog CSVs that several test modules serve or read.

Verbatim rows of skypilot-org/skypilot-catalog:
- ``LAMBDA_V9``: catalogs/v9/lambda/vms.csv at commit 2c3d7ea7d76b (as read 2026-12-02);
- ``NEBIUS_V9``: catalogs/v9/nebius/vms.csv at commit d9bf3aa4d21f (as read 2026-12-02).
"""

LAMBDA_V9 = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
    "cpu_4x_general,,,4.0,16.0,0.2,us-east-1,,\n"
    "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,3.29,europe-central-1,\"{'Gpus': [{'Name': 'H100', "
    "'Manufacturer': 'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 81920}}], "
    "'TotalGpuMemoryInMiB': 81920}\",\n"
    "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,31.92,us-east-1,\"{'Gpus': [{'Name': 'H100', "
    "'Manufacturer': 'NVIDIA', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 81920}}], "
    "'TotalGpuMemoryInMiB': 81920}\",\n"
    "gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,\"{'Gpus': [{'Name': 'A100', "
    "'Manufacturer': 'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 40960}}], "
    "'TotalGpuMemoryInMiB': 40960}\",\n"
)
NEBIUS_V9 = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
    "gpu-h100-sxm_1gpu-16vcpu-200gb,H100,1,16,200,2.95,eu-north1,\"{'Gpus': [{'Name': 'H100', "
    "'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 0}}], "
    "'TotalGpuMemoryInMiB': 0}\",1.25\n"
    "gpu-h200-sxm_8gpu-128vcpu-1600gb,H200,8,128,1600,28.00,eu-north1,\"{'Gpus': [{'Name': 'H200', "
    "'Manufacturer': 'NVIDIA', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 0}}], "
    "'TotalGpuMemoryInMiB': 0}\",11.60\n"
)

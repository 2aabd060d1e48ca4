"""Verbatim excerpts of SkyPilot catalog CSVs that several test modules serve or read.

Verbatim rows of skypilot-org/skypilot-catalog:
- ``LAMBDA_V9``: catalogs/v9/lambda/vms.csv at commit 2c3d7ea7d76b (as read 2026-12-02);
- ``NEBIUS_V9``: catalogs/v9/nebius/vms.csv at commit d9bf3aa4d21f (as read 2026-12-02);
- ``GCP_V9``: catalogs/v9/gcp/vms.csv at commit 2c3d7ea7d76b (as read 2026-12-02): machine
  rows (no accelerator) and GPU rows (no InstanceType) of zones us-central1-a and
  us-east4-a, and the A4 machine row whose Price is 0.0 in every zone of the file.
- ``GCP_V9_TPU``: Cloud TPU slice rows of the same file and commit (read 2026-12-07):
  one row per slice and zone, ``AcceleratorCount`` 1, the slice's price. Chosen to show
  a chip-counted suffix (``v5litepod``, ``v6e``), a TensorCore-counted one (``v2``,
  ``v5p``, the largest v5p slice too) and the 700.0 SkyPilot writes where it found no
  v6e price (asia-east1-c; the spot price of southamerica-west1-a).
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
GCP_V9 = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice\n"
    "a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.73948,0.38812\n"
    "a2-highgpu-8g,96.0,680.0,,,,us-central1,us-central1-a,5.91582,3.10496\n"
    "a3-highgpu-8g,208.0,1872.0,,,,us-central1,us-central1-a,9.46006,5.15632\n"
    "a3-highgpu-8g,208.0,1872.0,,,,us-east4,us-east4-a,9.46006,3.68077\n"
    "a4-highgpu-8g,224.0,3968.0,,,,us-central1,us-central1-b,0.0,0.0\n"
    "g2-standard-12,12.0,48.0,,,,us-central1,us-central1-a,0.44038,0.22505\n"
    "g2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.14679,0.07502\n"
    "n1-highmem-8,8.0,52.0,,,,us-central2,us-central2-b,0.47321,0.09962\n"
    ",,,A100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},us-central1,us-central1-a,"
    "2.93391,1.5399\n"
    ",,,A100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},us-central1,us-central1-a,"
    "23.47126,12.3192\n"
    ",,,H100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-central1,us-central1-a,"
    "33.60609,42.7096\n"
    ",,,H100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-east4,us-east4-a,"
    "78.37241,30.4792\n"
    ",,,B200,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 184320}}]},us-central1,us-central1-b,"
    "90.216,37.7464\n"
    ",,,L4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 24576}}]},us-central1,us-central1-a,"
    "0.56004,0.2862\n"
    ",,,tpu-v6e-1,1,tpu-v6e-1,us-central1,us-central1-a,2.7,0.59266\n"
)
GCP_V9_TPU = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice\n"
    ",,,tpu-v2-8,1,tpu-v2-8,us-central1,us-central1-b,4.5,1.35\n"
    ",,,tpu-v5litepod-8,1,tpu-v5litepod-8,us-central1,us-central1-a,9.6,2.38168\n"
    ",,,tpu-v5litepod-8,1,tpu-v5litepod-8,us-east5,us-east5-a,9.6,4.8\n"
    ",,,tpu-v5p-8,1,tpu-v5p-8,us-central1,us-central1-a,16.8,3.12196\n"
    ",,,tpu-v5p-8,1,tpu-v5p-8,us-east5,us-east5-a,16.8,5.19981\n"
    ",,,tpu-v5p-12288,1,tpu-v5p-12288,us-central1,us-central1-a,25804.8,4795.33056\n"
    ",,,tpu-v6e-8,1,tpu-v6e-8,asia-east1,asia-east1-c,700.0,700.0\n"
    ",,,tpu-v6e-8,1,tpu-v6e-8,southamerica-west1,southamerica-west1-a,21.6,700.0\n"
    ",,,tpu-v6e-8,1,tpu-v6e-8,us-central1,us-central1-a,21.6,4.74132\n"
    ",,,tpu-v6e-8,1,tpu-v6e-8,us-east4,us-east4-a,21.6,2.75929\n"
)

"""A real three-node Slurm cluster on this machine for the fleet tests (Debian's slurm-wlm, munge).

One ``munged`` (its own key and socket), one ``slurmctld`` on a free
loopback port and three ``slurmd -N n1|n2|n3`` on their own ports and spool
folders, all in one temporary folder with a private ``SLURM_CONF``. Every
process is started here and ended by its own PID; nothing listens beyond
127.0.0.1 and nothing under /etc is read or written.

GPUs: each node declares count-only GPU GRES (gres.conf ``Count=``, no device
files). The tasks load the fake ``libnvidia-ml.so.1`` (tests/fake_nvml_lib.py)
through the environment ``srun`` passes on, and a ``TaskProlog`` gives each
node its own fake driver settings (``node_env``), so what Slurm declares and
what each node's GPUDesk detects are both real data.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

NODES = ("n1", "n2", "n3")
DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol")


def missing_programs() -> list[str]:
    """The Slurm and munge programs this machine lacks (.ci/run installs them on Debian)."""
    return [name for name in DAEMONS if _which(name) is None]


def _which(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin")


def _node_ports() -> dict[str, int]:
    """A free port per slurmd, from the kernel's ephemeral range (32768-60999 on Linux):
    fixed ports such as 17001 sit in Ray's worker range (10002-19999), where a Ray test's
    leftover worker held them and every slurmd failed to bind."""
    return {node: _free_port() for node in NODES}


def _free_port() -> int:
    # On every address, as slurmd binds; nothing is sent, the probe closes at once.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])


@dataclass
class SlurmCluster:
    """A started cluster: its folder, its environment, its processes by PID."""

    root: Path
    env: dict[str, str]
    controller_port: int
    startup_s: float = 0.0
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    def command(
        self, *arguments: str, timeout: float = 30.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(arguments), env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(arguments)}: exit {done.returncode}: {done.stderr}")
        return done

    def node_states(self) -> dict[str, str]:
        out = self.command("sinfo", "-h", "-N", "-o", "%N %T").stdout
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def wait_idle(self, nodes: tuple[str, ...] = NODES, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            states = self.node_states()
            if all(states.get(node, "").startswith("idle") for node in nodes):
                return
            time.sleep(0.2)
        raise RuntimeError(f"nodes not idle after {timeout:g} s: {states}\n{self.logs()}")

    def set_node(self, node: str, state: str, reason: str = "gpudesk test") -> None:
        arguments = ["scontrol", "update", f"NodeName={node}", f"State={state}"]
        if state.lower() in ("drain", "down"):
            arguments.append(f"Reason={reason}")
        self.command(*arguments)

    def start_slurmd(self, node: str) -> None:
        with (self.root / f"slurmd.{node}.out").open("ab") as log:
            self.processes[f"slurmd-{node}"] = subprocess.Popen(
                [_which("slurmd") or "slurmd", "-D", "-N", node, "-f", str(self.conf)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self, name: str, sig: signal.Signals = signal.SIGTERM) -> None:
        """End one of this cluster's processes by its PID and reap it."""
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def task_pids(self, node: str) -> list[int]:
        """PIDs of job steps (slurmstepd) and tasks running for ``node`` of this cluster."""
        found: list[int] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if (
                f"SLURMD_NODENAME={node}".encode() in environ
                and f"SLURM_CONF={self.conf}".encode() in environ
            ):
                found.append(int(entry.name))
        return found

    def logs(self) -> str:
        parts = []
        for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")):
            text = path.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def close(self) -> None:
        for name in [name for name in self.processes if name.startswith("slurmd")]:
            self.stop(name)
        self.stop("slurmctld")
        self.stop("munged")
        # Steps a killed slurmd left behind (slurmstepd outlives its slurmd).
        for node in NODES:
            for pid in self.task_pids(node):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


def _write_config(
    root: Path,
    controller_port: int,
    node_ports: Mapping[str, int],
    gres: Mapping[str, str],
    real_memory_mb: int,
    features: Mapping[str, str],
) -> None:
    host = socket.gethostname()
    for folder in ("ctld", "spool", "munge"):
        (root / folder).mkdir(mode=0o700)
    for node in NODES:
        (root / "spool" / node).mkdir(mode=0o700)
    node_lines = []
    gres_lines = []
    next_device = dict.fromkeys(NODES, 0)
    for node in NODES:
        declared = gres.get(node, "")
        line = (
            f"NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 Port={node_ports[node]} "
            f"CPUs=2 RealMemory={real_memory_mb} State=UNKNOWN"
        )
        if declared:
            line += f" Gres={declared}"
        if features.get(node):
            line += f" Feature={features[node]}"
        node_lines.append(line)
        for item in filter(None, declared.split(",")):
            parts = item.split(":")
            kind, count = parts[0], parts[-1]
            type_part = f" Type={parts[1]}" if len(parts) == 3 else ""
            # Slurm 22.05 drops a GPU GRES without device files ("Removing file-less GPU"),
            # so each node gets empty files standing in for /dev/nvidiaN.
            files = []
            for _ in range(int(count)):
                device = root / "dev" / node / f"nvidia{next_device[node]}"
                device.parent.mkdir(parents=True, exist_ok=True)
                device.touch()
                files.append(str(device))
                next_device[node] += 1
            gres_lines.append(
                f"NodeName={node} Name={kind}{type_part} Count={count} File={','.join(files)}"
            )
    prolog = root / "task_prolog.sh"
    prolog.write_text(
        "#!/bin/sh\n"
        "# Each node's fake driver settings: 'export NAME=VALUE' lines set the task's env.\n"
        f'file="{root}/node_env/$SLURMD_NODENAME"\n'
        '[ -f "$file" ] && cat "$file"\n'
        "# A node held by the test (hold_node) waits here, as a slow or hung node would.\n"
        f'while [ -f "{root}/hold/$SLURMD_NODENAME" ]; do sleep 0.2; done\n'
        "exit 0\n"
    )
    prolog.chmod(0o755)
    (root / "node_env").mkdir()
    (root / "hold").mkdir()
    (root / "gres.conf").write_text("\n".join(gres_lines) + "\n")
    (root / "slurm.conf").write_text(
        "\n".join(
            [
                "ClusterName=gpudesk-test",
                f"SlurmctldHost={host}(127.0.0.1)",
                f"SlurmctldPort={controller_port}",
                f"SlurmdPort={min(node_ports.values())}",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={root}/munge/munge.socket",
                f"StateSaveLocation={root}/ctld",
                f"SlurmdSpoolDir={root}/spool/%n",
                f"SlurmctldPidFile={root}/slurmctld.pid",
                f"SlurmdPidFile={root}/slurmd.%n.pid",
                f"SlurmctldLogFile={root}/slurmctld.log",
                f"SlurmdLogFile={root}/slurmd.%n.log",
                "SlurmctldDebug=info",
                "SlurmdDebug=info",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                f"TaskProlog={prolog}",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "SwitchType=switch/none",
                "MpiDefault=none",
                "GresTypes=gpu",
                "ReturnToService=2",
                "SlurmdTimeout=30",
                "InactiveLimit=0",
                "KillWait=2",
                "MinJobAge=5",
                "SchedulerType=sched/builtin",
                "AccountingStorageType=accounting_storage/none",
                "JobCompType=jobcomp/none",
                "JobAcctGatherType=jobacct_gather/none",
                "MailProg=/bin/true",
                *node_lines,
                "PartitionName=gpu Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP",
            ]
        )
        + "\n"
    )


def set_node_env(cluster: SlurmCluster, node: str, settings: Mapping[str, str]) -> None:
    """What ``node``'s tasks get on top of srun's environment (the TaskProlog reads it)."""
    text = "".join(f"export {name}={value}\n" for name, value in settings.items())
    (cluster.root / "node_env" / node).write_text(text)


def hold_node(cluster: SlurmCluster, node: str, held: bool = True) -> None:
    """Make ``node``'s next tasks wait before they start (until released)."""
    path = cluster.root / "hold" / node
    if held:
        path.touch()
    else:
        path.unlink(missing_ok=True)


def start_cluster(
    env: Mapping[str, str],
    *,
    gres: Mapping[str, str] | None = None,
    features: Mapping[str, str] | None = None,
    real_memory_mb: int = 1000,
    node_env: Mapping[str, Mapping[str, str]] | None = None,
) -> SlurmCluster:
    """Start munged, slurmctld and three slurmd; return once every node is idle.

    Args:
        env: the environment of the daemons and of ``srun`` (the tasks inherit it).
        gres: each node's declared ``Gres=`` (default ``gpu:2``).
    """
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="gpudesk-slurm-"))
    root.chmod(0o755)
    port = _free_port()
    _write_config(
        root,
        port,
        _node_ports(),
        gres if gres is not None else dict.fromkeys(NODES, "gpu:2"),
        real_memory_mb,
        features or {},
    )
    cluster_env = {
        **env,
        "SLURM_CONF": str(root / "slurm.conf"),
        "MUNGE_SOCKET": str(root / "munge" / "munge.socket"),
    }
    for name in list(cluster_env):
        if name.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_", "SINFO_")) and (
            name != "SLURM_CONF"
        ):
            del cluster_env[name]
    cluster = SlurmCluster(root, cluster_env, port)
    try:
        for node, settings in (node_env or {}).items():
            set_node_env(cluster, node, settings)
        key = root / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o600)
        munge_socket = root / "munge" / "munge.socket"
        with (root / "munged.out").open("ab") as log:
            cluster.processes["munged"] = subprocess.Popen(
                [
                    _which("munged") or "munged",
                    "--foreground",
                    "--force",
                    f"--socket={munge_socket}",
                    f"--key-file={key}",
                    f"--log-file={root}/munged.log",
                    f"--pid-file={root}/munge/munged.pid",
                    f"--seed-file={root}/munge/munged.seed",
                ],
                env=cluster_env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        _wait_for(lambda: munge_socket.exists(), 10, "munged's socket", cluster)
        with (root / "slurmctld.out").open("ab") as log:
            cluster.processes["slurmctld"] = subprocess.Popen(
                [_which("slurmctld") or "slurmctld", "-D", "-i", "-f", str(cluster.conf)],
                env=cluster_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _wait_for(lambda: _listening(port), 20, "slurmctld's port", cluster)
        for node in NODES:
            cluster.start_slurmd(node)
        cluster.wait_idle()
    except BaseException:
        cluster.close()
        raise
    cluster.startup_s = time.monotonic() - started
    return cluster


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait_for(ready: object, timeout: float, what: str, cluster: SlurmCluster) -> None:
    assert callable(ready)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, process in cluster.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited ({process.returncode})\n{cluster.logs()}")
        if ready():
            return
        time.sleep(0.05)
    raise RuntimeError(f"no {what} after {timeout:g} s\n{cluster.logs()}")


@contextlib.contextmanager
def running_cluster(env: Mapping[str, str], **options: object) -> Iterator[SlurmCluster]:
    cluster = start_cluster(env, **options)  # type: ignore[arg-type]
    try:
        yield cluster
    finally:
        cluster.close()

"""The memory bound is what this process may really allocate: the smallest of the host's MemAvailable, the
address-space and data-segment rlimits (``ulimit -v``, ``ulimit -d``), the cgroup limits (v2 ``memory.max``, v1
``memory.limit_in_bytes``) of its cgroup and their ancestors, and a SLURM job's memory request; a refusal names
the limit that decided. Each source is read from fake files under a root directory; one test runs a reader in a
child process under a real RLIMIT_AS."""

import gzip
import json
import os
import resource
import subprocess
import sys
import textwrap

import nibabel as nib
import numpy as np
import pytest

import inr.errors
from inr.data.medical import read_scan
from inr.errors import InputError, MemoryLimit, check_memory, memory_limits

GiB, MiB, KiB = 2**30, 2**20, 2**10
UNLIMITED = lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY)  # noqa: E731


def fake_root(tmp_path, available=16 * GiB, status=None, cgroup="0::/\n", files=None):
    """A root directory holding /proc/meminfo, /proc/self/status, /proc/self/cgroup and the cgroup ``files``
    ({relative path: text})."""
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "meminfo").write_text(f"MemTotal: {2 * available // KiB} kB\nMemAvailable: {available // KiB} kB\n")
    status = {"VmSize": GiB, "VmData": GiB // 2, "VmRSS": GiB // 4, **(status or {})}
    (tmp_path / "proc" / "self" / "status").write_text("".join(f"{k}:\t{v // KiB} kB\n" for k, v in status.items()))
    (tmp_path / "proc" / "self" / "cgroup").write_text(cgroup)
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def smallest(root, environ=None, getrlimit=UNLIMITED) -> MemoryLimit:
    return min(memory_limits(root, environ or {}, getrlimit), key=int)


def test_without_limits_the_hosts_available_memory_decides(tmp_path):
    limit = smallest(fake_root(tmp_path, available=3 * GiB))
    assert (int(limit), limit.source) == (3 * GiB, "")


def test_the_address_space_limit_counts_the_virtual_size_already_mapped(tmp_path):
    root = fake_root(tmp_path, status={"VmSize": 4 * GiB})
    rlimits = {resource.RLIMIT_AS: (5 * GiB, resource.RLIM_INFINITY)}
    limit = smallest(root, getrlimit=lambda which: rlimits.get(which, UNLIMITED(which)))
    assert (int(limit), limit.source) == (GiB, "address-space limit, ulimit -v")


def test_the_data_segment_limit_counts_the_data_already_mapped(tmp_path):
    root = fake_root(tmp_path, status={"VmData": 3 * GiB})
    rlimits = {resource.RLIMIT_DATA: (5 * GiB, 8 * GiB)}
    limit = smallest(root, getrlimit=lambda which: rlimits.get(which, UNLIMITED(which)))
    assert (int(limit), limit.source) == (2 * GiB, "data-segment limit, ulimit -d")


def test_a_cgroup_v2_limit_counts_its_usage_less_the_reclaimable_page_cache(tmp_path):
    job = "sys/fs/cgroup/system.slice/job.scope"
    root = fake_root(
        tmp_path,
        cgroup="0::/system.slice/job.scope\n",
        files={
            f"{job}/memory.max": f"{4 * GiB}\n",
            f"{job}/memory.current": f"{3 * GiB}\n",
            f"{job}/memory.stat": f"anon {GiB}\ninactive_file {GiB}\n",
            "sys/fs/cgroup/system.slice/memory.max": "max\n",  # no limit above it
        },
    )
    limit = smallest(root)
    assert (int(limit), limit.source) == (2 * GiB, f"cgroup memory.max of {job}, a container's or job's limit")


def test_a_cgroup_v2_limit_of_an_ancestor_holds_too(tmp_path):
    root = fake_root(
        tmp_path,
        cgroup="0::/user.slice/session.scope\n",
        files={
            "sys/fs/cgroup/user.slice/session.scope/memory.max": "max\n",
            "sys/fs/cgroup/user.slice/memory.max": f"{GiB}\n",
            "sys/fs/cgroup/user.slice/memory.current": f"{GiB // 4}\n",
        },
    )
    limit = smallest(root)
    assert int(limit) == 3 * GiB // 4 and limit.source.startswith("cgroup memory.max of sys/fs/cgroup/user.slice,")


def test_a_container_sees_its_own_cgroup_as_the_root_whatever_proc_self_cgroup_says(tmp_path):
    """Docker without a cgroup namespace lists the host's path (/docker/<id>) but mounts the container's cgroup
    as /sys/fs/cgroup: the limit is read there."""
    root = fake_root(
        tmp_path,
        cgroup="0::/docker/0123abcd\n",
        files={"sys/fs/cgroup/memory.max": f"{2 * GiB}\n", "sys/fs/cgroup/memory.current": f"{GiB // 2}\n"},
    )
    assert int(smallest(root)) == 3 * GiB // 2


def test_a_cgroup_path_outside_the_namespace_reads_the_mounted_root(tmp_path):
    """Inside a cgroup namespace a process of another cgroup is listed as /../…: the mounted root holds."""
    root = fake_root(
        tmp_path,
        cgroup="0::/../../../other.scope\n",  # the root directory's other.scope, outside sys/fs/cgroup
        files={"sys/fs/cgroup/memory.max": f"{GiB}\n", "sys/fs/cgroup/memory.current": "0\n", "other.scope/memory.max": "1\n"},
    )
    assert int(smallest(root)) == GiB


def test_a_cgroup_v1_limit_and_its_unlimited_value(tmp_path):
    files = {
        "sys/fs/cgroup/memory/memory.limit_in_bytes": f"{3 * GiB}\n",
        "sys/fs/cgroup/memory/memory.usage_in_bytes": f"{2 * GiB}\n",
        "sys/fs/cgroup/memory/memory.stat": f"cache {GiB}\ntotal_inactive_file {GiB // 2}\n",
    }
    root = fake_root(tmp_path, cgroup="5:memory:/docker/0123abcd\n4:cpu,cpuacct:/\n", files=files)
    limit = smallest(root)
    assert int(limit) == 3 * GiB // 2 and limit.source.startswith("cgroup v1 memory.limit_in_bytes of sys/fs/cgroup/memory")
    (root / "sys/fs/cgroup/memory/memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    assert smallest(root).source == ""


def test_a_slurm_jobs_memory_request_less_what_the_process_holds(tmp_path):
    root = fake_root(tmp_path, status={"VmRSS": GiB})
    limit = smallest(root, {"SLURM_MEM_PER_NODE": "4096"})
    assert (int(limit), limit.source) == (3 * GiB, "the SLURM job's memory, SLURM_MEM_PER_NODE")
    limit = smallest(root, {"SLURM_MEM_PER_CPU": "1024", "SLURM_CPUS_ON_NODE": "2"})
    assert (int(limit), limit.source) == (GiB, "the SLURM job's memory, SLURM_MEM_PER_CPU × SLURM_CPUS_ON_NODE")
    assert smallest(root, {"SLURM_MEM_PER_NODE": "0"}).source == ""  # --mem=0: the whole node


def test_the_smallest_limit_decides_and_the_refusal_names_it(tmp_path, monkeypatch):
    """A 64³ int16 NIfTI (4.5 MiB read and mapped to [0, 1]: 18 bytes a voxel) under the cgroup limit of a job
    that has 4 MiB left: refused from its header, the cgroup named."""
    root = fake_root(
        tmp_path / "root",
        cgroup="0::/\n",
        files={"sys/fs/cgroup/memory.max": f"{64 * MiB}\n", "sys/fs/cgroup/memory.current": f"{60 * MiB}\n"},
    )
    rlimits = {resource.RLIMIT_AS: (8 * GiB, resource.RLIM_INFINITY)}
    monkeypatch.setattr(
        inr.errors,
        "memory_limits",
        lambda: memory_limits(root, {"SLURM_MEM_PER_NODE": "1024"}, lambda which: rlimits.get(which, UNLIMITED(which))),
    )
    path = tmp_path / "scan.nii.gz"
    nib.save(nib.Nifti1Image(np.zeros((64, 64, 64), dtype=np.int16), np.eye(4)), str(path))
    with pytest.raises(InputError) as info:
        read_scan(path)
    assert str(info.value) == (
        f"{path}: a 64×64×64 int16 NIfTI volume (its header) needs an estimated 4.5 MiB, more than 50% of the 4.0 MiB "
        "this process may allocate (cgroup memory.max of sys/fs/cgroup, a container's or job's limit); "
        "crop or downsample the scan first"
    )


def test_a_reported_amount_without_a_source_reads_as_available():
    with pytest.raises(InputError, match=r"more than 50% of the 1\.0 GiB available; crop it$"):
        check_memory("x", GiB, advice="crop it", available=GiB)


CHILD = textwrap.dedent(
    """
    import json, sys
    from inr.data.medical import read_scan
    from inr.errors import InputError, memory_limits
    try:
        read_scan(sys.argv[1])
        outcome = "read"
    except InputError as exc:
        outcome = str(exc)
    except MemoryError:
        outcome = "MemoryError"
    print(json.dumps({"outcome": outcome, "limits": [[int(m), m.source] for m in memory_limits()]}))
    """
)
PROBE = "import inr.data.medical; print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmSize')))"


@pytest.mark.slow
def test_under_a_real_address_space_limit_a_nifti_is_refused_before_it_is_read(tmp_path):
    """A .nii.gz whose header declares 640³ uint8 voxels (4.5 GiB once read and mapped to [0, 1]) and holds 1 KiB of
    them, read by a child process whose RLIMIT_AS leaves 1 GiB beyond its interpreter and imports: refused from the
    header naming the address-space limit (it was refused by nothing before, read, and failed as 'not a readable
    NIfTI file (MemoryError …)' or at the missing data; here no voxel is read, none being there to read)."""
    header = nib.Nifti1Header()
    header.set_data_shape((640, 640, 640))
    header.set_data_dtype(np.uint8)
    path = tmp_path / "large.nii.gz"
    with gzip.open(path, "wb") as f:
        f.write(header.binaryblock + bytes(int(header["vox_offset"]) - header.sizeof_hdr + KiB))
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    env = {k: v for k, v in env.items() if not k.startswith("SLURM_MEM")}
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    cap = int(probe.stdout.split()[-1]) * KiB + GiB  # the child's own virtual size and 1 GiB more

    def limit_address_space():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env, preexec_fn=limit_address_space
    )
    assert child.returncode == 0, child.stderr[-2000:]
    result = json.loads(child.stdout.splitlines()[-1])
    decided = min(result["limits"], key=lambda limit: limit[0])
    # refused from the header, before any voxel is read, whichever limit is tightest on this machine
    assert result["outcome"].startswith(f"{path}: a 640×640×640 uint8 NIfTI volume (its header) needs an estimated 4.2 GiB")
    if decided[1] == "address-space limit, ulimit -v":  # as on a machine without a tighter cgroup or SLURM bound
        assert result["outcome"].endswith(
            "iB this process may allocate (address-space limit, ulimit -v); crop or downsample the scan first"
        ), result["outcome"]
    else:
        assert decided[1] in result["outcome"], (decided, result["outcome"])

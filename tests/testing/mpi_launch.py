"""One way to start an MPI job in the tests, whichever MPI runs it.

Open MPI (mpirun, 4 and 5) and MPICH's Hydra (mpiexec.mpich) spell the
same requests differently; the tests say what they want and this module
writes the command line for the launcher it finds:

    launcher = Launcher("/usr/bin/mpiexec.mpich")
    cmd = launcher.command(4, ["./prog"], export={"LD_PRELOAD": lib},
                           bind_to_core=True)
    env = {**launcher.environment(), ...}

  - more ranks than cores (Open MPI refuses unless told; Hydra allows);
  - as root (Open MPI refuses unless told; Hydra does not care);
  - an environment variable for the ranks only (Open MPI -x NAME=VALUE;
    Hydra -genv NAME VALUE), where the launcher itself must not have it;
  - binding each rank to a core.
"""
import os
import subprocess


class Launcher:
    def __init__(self, mpirun):
        self.mpirun = mpirun
        try:
            version = subprocess.run([mpirun, "--version"], capture_output=True,
                                     text=True, timeout=30)
            text = version.stdout + version.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            text = str(e)
        if "Open MPI" in text or "OpenRTE" in text:
            self.flavour = "openmpi"
        elif "HYDRA" in text or "MPICH" in text:
            self.flavour = "mpich"
        else:
            raise RuntimeError(f"{mpirun}: neither Open MPI nor MPICH's Hydra "
                               f"(--version says {text.strip()[:200]!r})")

    def __str__(self):
        return f"{self.flavour} ({self.mpirun})"

    def environment(self):
        """What the launcher needs in its environment on VMs and containers."""
        if self.flavour == "openmpi":
            # No CMA single-copy (ptrace may be denied), and more ranks than
            # cores allowed.
            return {"OMPI_MCA_btl_vader_single_copy_mechanism": "none",
                    "OMPI_MCA_rmaps_base_oversubscribe": "1"}
        return {}

    def _head(self):
        cmd = [self.mpirun]
        if self.flavour == "openmpi":
            if os.geteuid() == 0:
                cmd.append("--allow-run-as-root")
            cmd.append("--oversubscribe")
        return cmd

    def _part(self, np, program, export, bind_to_core):
        part = ["-np", str(np)]
        for name, value in (export or {}).items():
            if self.flavour == "openmpi":
                part += ["-x", f"{name}={value}"]
            else:
                part += ["-env", name, value]
        if bind_to_core:
            part += (["--bind-to", "core"] if self.flavour == "openmpi"
                     else ["-bind-to", "core"])
        return part + list(program)

    def command(self, np, program, export=None, bind_to_core=False):
        """`np` ranks of `program` (a list: the executable and its args)."""
        return self._head() + self._part(np, program, export, bind_to_core)

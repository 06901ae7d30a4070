"""Errors the CLI turns into exit codes: bad input (2) and an original that does not fail as expected (3),
the latter split by why, so the nightly corpus can tell a fixed bug from a flaky or a changed one."""


class InputError(Exception):
    """A user file or option is wrong; the message names the file, the field and what was expected."""


class EnvironmentBroken(InputError):
    """This machine cannot compile the case: a tool the compile needs (nvcc for this CUDA, an interpreter, a
    toolchain) cannot run here. A fact about the machine, never about the kernel."""


class CheckFailed(InputError):
    """The case's wrong-result check failed itself: its reference raised or ran past its limit, or our own
    code did. Never a bug of AKG's; the message names what failed."""


class NotFailingError(Exception):
    """The original case does not fail, or fails differently from `expect`."""


class CompilesFine(NotFailingError):
    """The original compiles without error."""


class NeedsCodegen(NotFailingError):
    """The original passes AKG's GPU pipeline; its failure, if any, is in CUDA code generation, which this
    machine cannot run (no nvcc or GPU)."""


class NotChecked(NotFailingError):
    """The original's wrong-result check compared too little (its reference is undefined at most elements):
    neither right nor wrong."""


class FailsDifferently(NotFailingError):
    """The original fails, but not the way `expect` says."""


class Unplaced(NotFailingError):
    """The original crashes or hangs, but where cannot be read (no gdb, or a stack py-spy may not read): a
    reduction would accept any crash or hang, so none is made."""


class Flaky(NotFailingError):
    """The failure shows in some runs only (of the original, or of the reduced case when confirming)."""


class InvalidKernel(Exception):
    """The candidate is not a kernel MindSpore would hand to AKG; it is rejected without a compile."""

import os


def ids():
    return [os.getuid(), os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/net")]


def open_files():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            st = os.stat(f"/proc/self/fd/{name}")
        except OSError:
            continue
        found.append([st.st_dev, st.st_ino])
    return found


def budget():
    """The thread and malloc settings this sandbox was started with."""
    names = ("NPROC", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MALLOC_ARENA_MAX")
    return {name: os.environ.get(name) for name in names}

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

#!/usr/bin/env python3
"""Compiles one CUDA file to PTX with NVRTC, NVIDIA's CUDA C++ compiler as a library (the device half of nvcc).

    nvrtc-ptx.py LIBNVRTC SOURCE ARCH [-IDIR | -DNAME ...] > out.ptx

ARCH is a number (80 for compute_80). Used by hw/make-corpus.sh; needs no GPU. Exits 1 with NVRTC's log on a
compile error.
"""
import ctypes
import sys


def main():
    lib_path, source, arch, *extra = sys.argv[1:]
    lib = ctypes.CDLL(lib_path)
    with open(source, "rb") as f:
        text = f.read()
    prog = ctypes.c_void_p()
    name = source.rsplit("/", 1)[-1].encode()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text, name, 0, None, None) != 0:
        sys.exit(f"{source}: nvrtcCreateProgram failed")
    opts = [f"--gpu-architecture=compute_{arch}".encode(), b"-default-device", b"--std=c++17"]
    opts += [o.encode() for o in extra]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    status = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    if status != 0:
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        sys.stderr.write(log.value.decode(errors="replace"))
        sys.exit(1)
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    sys.stdout.write(ptx.value.decode())


if __name__ == "__main__":
    main()

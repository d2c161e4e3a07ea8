// warpscope corpus shim for NVRTC (tests/data/published/make.sh pre-includes it with NVRTC's -include).
// NVRTC has no C library headers; the corpus kernels take these few names from them (through <stdint.h>,
// <float.h>, <math.h>, <sys/types.h>, pulled in by their host includes under nvcc). The integer types are
// spelled as libcu++ spells them for NVRTC (cuda/std/__cuda/cstdint_prelude.h), so that a kernel including
// <cuda/barrier> sees the same typedefs; the macros have glibc's values (INFINITY and NAN as CUDA's
// math_constants.h writes CUDART_INF_F and CUDART_NAN_F, since NVRTC has no __builtin_inff).
#pragma once
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef signed short int16_t;
typedef unsigned short uint16_t;
typedef signed int int32_t;
typedef unsigned int uint32_t;
typedef signed long long int64_t;
typedef unsigned long long uint64_t;
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
typedef unsigned int uint;
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#define FLT_MIN 1.17549435082228750796873653722224568e-38F
#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
#define M_PI 3.14159265358979323846

# flowdp.m4 -- autoconf macros of the flowdp project.

# FDP_REQUIRE_PKG(VARIABLE-PREFIX, MODULES, DEBIAN-PACKAGE)
# ---------------------------------------------------------
# Finds MODULES through pkg-config and sets VARIABLE-PREFIX_CFLAGS and
# VARIABLE-PREFIX_LIBS, or stops configure with a message that names the
# Debian package to install.
AC_DEFUN([FDP_REQUIRE_PKG], [
  PKG_CHECK_MODULES([$1], [$2], [],
    [AC_MSG_ERROR([$2 not found by pkg-config: install the Debian package $3 (apt-get install $3)])])
])

# FDP_ADD_CFLAG_IF_SUPPORTED(VARIABLE, FLAG)
# ------------------------------------------
# Appends FLAG to VARIABLE when the C compiler accepts it without warnings.
AC_DEFUN([FDP_ADD_CFLAG_IF_SUPPORTED], [
  AS_VAR_PUSHDEF([fdp_cv], [fdp_cv_cflag_$2])
  AC_CACHE_CHECK([whether $CC accepts $2], [fdp_cv], [
    fdp_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $2"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
                      [AS_VAR_SET([fdp_cv], [yes])], [AS_VAR_SET([fdp_cv], [no])])
    CFLAGS=$fdp_save_CFLAGS])
  AS_VAR_IF([fdp_cv], [yes], [$1="$$1 $2"])
  AS_VAR_POPDEF([fdp_cv])
])

# FDP_CHECK_SIMD
# --------------
# On x86-64, checks that the compiler can build the per-file SIMD code:
# -msse4.2 -mpclmul for lib/*-sse42.c and -mavx2 for lib/*-avx2.c.  Nothing
# else is built with these flags; the library picks the code at run time.
# Defines FDP_HAVE_SSE42 / FDP_HAVE_AVX2 and the automake conditionals of
# the same names.  Other architectures build only the generic code.
AC_DEFUN([FDP_CHECK_SIMD], [
  fdp_have_sse42=no
  fdp_have_avx2=no
  AS_CASE([$host_cpu], [x86_64|amd64], [
    fdp_save_CFLAGS=$CFLAGS
    AC_MSG_CHECKING([whether $CC builds SSE4.2 CRC32 and CLMUL intrinsics with -msse4.2 -mpclmul])
    CFLAGS="$CFLAGS -msse4.2 -mpclmul"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <nmmintrin.h>
#include <wmmintrin.h>]],
      [[__m128i a = _mm_cvtsi64_si128(1);
        a = _mm_clmulepi64_si128(a, a, 0);
        return (int) _mm_crc32_u64(0, (unsigned long long) _mm_cvtsi128_si64(a));]])],
      [fdp_have_sse42=yes])
    AC_MSG_RESULT([$fdp_have_sse42])
    AC_MSG_CHECKING([whether $CC builds AVX2 intrinsics with -mavx2])
    CFLAGS="$fdp_save_CFLAGS -mavx2"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <immintrin.h>]],
      [[__m256i a = _mm256_set1_epi64x(1);
        a = _mm256_and_si256(a, a);
        return _mm256_testz_si256(a, a);]])],
      [fdp_have_avx2=yes])
    AC_MSG_RESULT([$fdp_have_avx2])
    CFLAGS=$fdp_save_CFLAGS
  ])
  AS_IF([test "x$fdp_have_sse42" = xyes],
        [AC_DEFINE([FDP_HAVE_SSE42], [1], [Define to 1 to build the SSE4.2 code.])])
  AS_IF([test "x$fdp_have_avx2" = xyes],
        [AC_DEFINE([FDP_HAVE_AVX2], [1], [Define to 1 to build the AVX2 code.])])
  AM_CONDITIONAL([FDP_HAVE_SSE42], [test "x$fdp_have_sse42" = xyes])
  AM_CONDITIONAL([FDP_HAVE_AVX2], [test "x$fdp_have_avx2" = xyes])
])

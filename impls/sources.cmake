# The library's sources. A variant with intrinsics gets its ISA flags here,
# on its own file only; the dispatcher decides at run time whether it runs.
set(ATTN_SOURCES
  impls/api.c
  impls/cpu_features.c
  impls/table.c
  impls/problem.c
  impls/visibility.c
  impls/flash_driver.c
  impls/flash_avx2_decode.c
  impls/flash_avx512_decode.c
  impls/flash_avx512_bf16_decode.c
  impls/exp_avx2.c
  impls/exp_avx512.c
  impls/block_softmax.c
  impls/block_softmax_avx2.c
  impls/block_softmax_avx512.c
  impls/widen_f16c.c
  impls/transpose.c
  impls/transpose_avx2.c
  impls/transpose_avx512.c
)
# The judge (reference/): its own library, built from include/attn.h and its
# own headers only. The harness and tests use all of it; libattn.so links
# only what its public attn_reference needs.
set(ATTN_REFERENCE_SOURCES
  reference/reference.c
  reference/metrics.c
)
# Each variant's own file, from the one list (variants.inc: the second
# argument of each ATTN_VARIANT line), so adding a variant never touches
# this file. Editing the list re-runs CMake.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/impls/variants.inc)
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/impls/variants.inc ATTN_VARIANT_LINES REGEX "^ATTN_VARIANT\\(")
foreach(line ${ATTN_VARIANT_LINES})
  if(NOT line MATCHES "^ATTN_VARIANT\\(([A-Za-z_0-9]+), *\"([^\"]+)\"\\)")
    message(FATAL_ERROR "impls/variants.inc: cannot read '${line}' (want ATTN_VARIANT(symbol, \"file.c\"))")
  endif()
  list(APPEND ATTN_SOURCES impls/${CMAKE_MATCH_2})
endforeach()
# Only the intrinsics files get ISA flags: per ISA its block kernels, its
# decode kernel and its exp over arrays.
set_source_files_properties(impls/flash_avx2.c impls/exp_avx2.c impls/block_softmax_avx2.c
                            PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
# avx2's decode kernel also reads f16 K/V (F16C, used only when present).
set_source_files_properties(impls/flash_avx2_decode.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
# The flash driver's tile transposes, chosen at run time (attn_transpose_best).
set_source_files_properties(impls/transpose_avx2.c PROPERTIES COMPILE_OPTIONS "-mavx2")
set_source_files_properties(impls/transpose_avx512.c PROPERTIES COMPILE_OPTIONS "-mavx512f")
# f16/bf16 widened in registers, chosen at run time (attn_widen_best).
set_source_files_properties(impls/widen_f16c.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mf16c")
set_source_files_properties(impls/flash_avx512.c impls/flash_avx512_decode.c impls/exp_avx512.c
                            impls/block_softmax_avx512.c PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma")
# avx512_bf16: vdpbf16ps and vcvtne2ps2bf16 (AVX512_BF16), vpermw (AVX512BW).
set_source_files_properties(impls/flash_avx512_bf16.c impls/flash_avx512_bf16_decode.c
                            PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma;-mavx512bw;-mavx512bf16")
# amx: avx512_bf16's building blocks around tdpbf16ps (AMX-TILE, AMX-BF16).
set_source_files_properties(impls/flash_amx.c
                            PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma;-mavx512bw;-mavx512bf16;-mamx-tile;-mamx-bf16")
set(ATTN_EXTRA_INCLUDES "")
set(ATTN_EXTRA_LIBS "")

# xsmm: libxsmm 1.17 (static only in Debian). Its archive needs BLAS symbols
# (sgemm_ for its own fallback), which OpenBLAS below provides; the archive is
# PIC (no R_X86_64_32 relocations), so it links into libattn.so, and
# --exclude-libs keeps its symbols out of libattn.so's exported interface.
pkg_check_modules(LIBXSMM QUIET IMPORTED_TARGET libxsmm)
if(NOT LIBXSMM_FOUND)
  message(FATAL_ERROR "libxsmm not found (pkg-config libxsmm): install the Debian package libxsmm-dev")
endif()
list(APPEND ATTN_EXTRA_LIBS PkgConfig::LIBXSMM "-Wl,--exclude-libs,libxsmm.a")

# blas: OpenBLAS, the pthread build (libopenblas-dev / libopenblas-pthread-dev);
# impls/blas.c sets its thread count per call, so an OpenMP build of OpenBLAS
# would change what it measures. Listed after libxsmm, whose BLAS calls it serves.
pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
if(NOT OPENBLAS_FOUND)
  message(FATAL_ERROR "OpenBLAS not found (pkg-config openblas): install the Debian package libopenblas-dev (pthread variant: libopenblas-pthread-dev)")
endif()
list(APPEND ATTN_EXTRA_LIBS PkgConfig::OPENBLAS)

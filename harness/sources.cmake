# The attnbench CLI: C11 everywhere; only the Google Benchmark shim is C++.
set(ATTNBENCH_SOURCES
  harness/main.c
  harness/cli.c
  harness/cases.c
  harness/shape_arg.c
  harness/accuracy.c
  harness/machine.c
  harness/cpu_uarch.c
  harness/cmd_list.c
  harness/cmd_verify.c
  harness/cmd_demo.c
  # bench (Google Benchmark through the shim), peak, matrix
  harness/gbench_shim.cc
  harness/cli_double.c
  harness/timer.c
  harness/perf_cases.c
  harness/perf_cell.c
  harness/big_alloc.c
  harness/peak.c
  harness/peak_json.c
  harness/peak_scalar.c
  harness/peak_stream.c
  harness/peak_avx2.c
  harness/peak_avx512.c
  harness/peak_bf16.c
  harness/peak_bandwidth.c
  harness/peak_avx512bf16.c
  harness/peak_amx.c
  harness/peak_sgemm.c
  harness/roof_probe.c
  harness/results_csv.c
  harness/progress.c
  harness/matrix_plan.c
  harness/interrupt.c
  harness/run_meta.c
  harness/perf_targets.c
  harness/cmd_bench.c
  harness/cmd_peak.c
  harness/cmd_rss.c
  harness/rss_probe.c
  harness/cmd_matrix.c
  harness/matrix_args.c
  harness/matrix_cell.c
  harness/matrix_pair.c
  harness/matrix_roof.c
  harness/matrix_peers.c
  harness/matrix_sidecar.c
  harness/matrix_budget.c
  harness/matrix_plan_file.c
  harness/peer_client.c
)
find_package(benchmark REQUIRED)
find_package(Threads REQUIRED)
set(ATTNBENCH_LIBS benchmark::benchmark Threads::Threads)

# The peak kernels: ISA flags on their own files only (peak.c runs each
# only when attn_cpu() has its features). The scalar one must stay scalar.
set_source_files_properties(harness/peak_scalar.c PROPERTIES
  COMPILE_OPTIONS "-fno-tree-vectorize;-fno-tree-slp-vectorize")
set_source_files_properties(harness/peak_avx2.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
set_source_files_properties(harness/peak_avx512.c PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma")
# The bf16 roofs: only these two files get the bf16 tensor ISAs' flags.
set_source_files_properties(harness/peak_avx512bf16.c PROPERTIES COMPILE_OPTIONS
  "-mavx512f;-mavx512bf16")
set_source_files_properties(harness/peak_amx.c PROPERTIES COMPILE_OPTIONS "-mamx-tile;-mamx-bf16")
# What the results' .meta.json says about this build.
get_directory_property(ATTNBENCH_DIR_OPTIONS COMPILE_OPTIONS)
string(TOUPPER "${CMAKE_BUILD_TYPE}" ATTNBENCH_BUILD_TYPE_UPPER)
string(JOIN " " ATTNBENCH_C_FLAGS ${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${ATTNBENCH_BUILD_TYPE_UPPER}}
       ${ATTNBENCH_DIR_OPTIONS})
string(STRIP "${ATTNBENCH_C_FLAGS}" ATTNBENCH_C_FLAGS)
set_source_files_properties(harness/run_meta.c PROPERTIES COMPILE_DEFINITIONS
  "ATTN_COMPILER=\"${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}\";ATTN_C_FLAGS=\"${ATTNBENCH_C_FLAGS}\";ATTN_BUILD_TYPE=\"${CMAKE_BUILD_TYPE}\";ATTN_BENCHMARK_VERSION=\"${benchmark_VERSION}\"")

# Everything but main.c also goes into a small library the tests link.
set(ATTNBENCH_CORE_SOURCES ${ATTNBENCH_SOURCES})
list(REMOVE_ITEM ATTNBENCH_CORE_SOURCES harness/main.c)
add_library(attnbench_core STATIC ${ATTNBENCH_CORE_SOURCES})
target_include_directories(attnbench_core PUBLIC harness)
target_link_libraries(attnbench_core PUBLIC attn_static ${ATTNBENCH_LIBS})

add_executable(attnbench harness/main.c)
target_link_libraries(attnbench PRIVATE attnbench_core)
# The shim is C++: link with the C++ driver so libstdc++ comes along.
set_target_properties(attnbench PROPERTIES LINKER_LANGUAGE CXX)
# Where matrix --peers finds the peers' environment and worker by default.
set_source_files_properties(harness/cmd_matrix.c PROPERTIES COMPILE_DEFINITIONS
  "ATTN_PEER_PYTHON=\"${PROJECT_SOURCE_DIR}/.venv-peers/bin/python3\";ATTN_PEER_WORKER=\"${PROJECT_SOURCE_DIR}/scripts/peers/worker.py\"")

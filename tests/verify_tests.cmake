# Included by ctest (TEST_INCLUDE_FILES, see tests/CMakeLists.txt) with
# ATTNBENCH and EXPECT set: one verify test per variant of the table and
# case set, and one per variant of the quick and adversarial cases in every
# element type (--dtype all: bf16, f16, narrow KV caches, each class the
# variant declares, rule B against naive in the same types and class). Without a built attnbench there is one failing test saying so,
# never silently none.
execute_process(COMMAND "${ATTNBENCH}" list --names
                OUTPUT_VARIABLE attn_names RESULT_VARIABLE attn_rc ERROR_QUIET)
if(NOT attn_rc EQUAL 0 OR attn_names STREQUAL "")
  add_test(verify_variants_unlisted sh -c "echo 'attnbench list --names failed (${attn_rc}): build attnbench first' >&2; exit 1")
  return()
endif()
string(REGEX REPLACE "\n$" "" attn_names "${attn_names}")
string(REPLACE "\n" ";" attn_names "${attn_names}")
foreach(v IN LISTS attn_names)
  foreach(set full adversarial)
    add_test(verify_${set}_${v} "${EXPECT}" 0 "verify: [0-9]+ passed, 0 failed"
             "${ATTNBENCH}" verify --variant ${v} --cases ${set})
    set_tests_properties(verify_${set}_${v} PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
  endforeach()
  add_test(verify_dtype_quick_${v} "${EXPECT}" 0 "verify: [0-9]+ passed, 0 failed"
           "${ATTNBENCH}" verify --variant ${v} --dtype all --cases quick)
  set_tests_properties(verify_dtype_quick_${v} PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
  # The adversarial cases in every element type and class (about 90 s for
  # all variants on 2 cores). Not again under ASan, which runs the f32
  # adversarial set of every variant and avx2's in every type
  # (verify_dtype_adversarial_avx2).
  add_test(verify_adversarial_dtypes_${v} "${EXPECT}" 0 "verify: [0-9]+ passed, 0 failed"
           "${ATTNBENCH}" verify --variant ${v} --dtype all --cases adversarial)
  set_tests_properties(verify_adversarial_dtypes_${v} PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2"
                       LABELS asan_skip)
endforeach()

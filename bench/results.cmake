# bench/results/: the row type and the results CSV (its schema, the
# writer, the reader of every schema version, the samples sidecar); what
# the engine writes and analysis reads. Builds opcost_results and its
# tests. Included by the top-level CMakeLists.txt after enable_testing().
file(GLOB OPCOST_RESULTS_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/results/*.c)
add_library(opcost_results STATIC ${OPCOST_RESULTS_SOURCES})
target_include_directories(opcost_results PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/results)
target_compile_options(opcost_results PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_results PUBLIC opcost_io m)

# The tests share the C tests' harness (C_EXPECT, c_report in c_samples.c)
# and scratch directory (c_tempdir.c). test_malformed: malformed shape
# files and results CSVs, every refusal names file:line.
foreach(t test_csv test_io test_malformed)
  add_executable(${t} ${PROJECT_SOURCE_DIR}/tests/c/${t}.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_tempdir.c)
  target_link_libraries(${t} PRIVATE opcost_results opcost_shapes
    rowops_testref)
  target_compile_options(${t} PRIVATE ${OPCOST_WARNINGS})
  add_test(NAME ${t} COMMAND ${t})
endforeach()

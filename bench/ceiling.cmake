# bench/ceiling/: the ceilings a row's fraction of peak is of: the
# bandwidth probed per op mix and cache level (ceiling.c), the full DRAM
# bandwidth remembered across runs (host_bandwidth.c), and the large
# buffers the probes and the points' tensors share (buffer.c). Below the
# engine (measure/), which reads them; torch-free. Builds opcost_ceiling
# and its tests. Included by the top-level CMakeLists.txt after
# enable_testing().
find_package(Threads REQUIRED)

file(GLOB OPCOST_CEILING_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_LIST_DIR}/ceiling/*.c)
add_library(opcost_ceiling STATIC ${OPCOST_CEILING_SOURCES})
target_include_directories(opcost_ceiling PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/ceiling)
target_compile_options(opcost_ceiling PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_ceiling PUBLIC opcost_io opcost_tracers m
  Threads::Threads rowops_kernels)

# The tests share the C tests' harness (C_EXPECT, c_report in c_samples.c)
# and scratch directory (c_tempdir.c, for test_host_bandwidth).
foreach(t test_ceiling test_host_bandwidth)
  add_executable(${t} ${PROJECT_SOURCE_DIR}/tests/c/${t}.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_tempdir.c)
  target_link_libraries(${t} PRIVATE opcost_ceiling rowops_testref)
  target_compile_options(${t} PRIVATE ${OPCOST_WARNINGS})
  add_test(NAME ${t} COMMAND ${t})
endforeach()
# the probe's time is not asserted (timing in CI is a benchmark); a hang is
set_tests_properties(test_ceiling PROPERTIES TIMEOUT 600)

# bench/ tracers and annotations: CUPTI's Activity API for the GPU
# attribution pass (cupti_tracer.c), NVTX ranges of a run (nvtx_ranges.c),
# NVML's SM clock (nvml_clock.c). Torch-free. Every library is loaded at
# run time (or, NVTX, is header-only), so a CPU-only build and a machine
# without a driver still run; building needs only the CUPTI and NVTX3
# headers of the CUDA toolkit, where it is found, else stubs. Included by
# the top-level CMakeLists.txt after enable_testing(), before driver.cmake.
option(OPCOST_WITH_CUPTI "Build the CUPTI tracer where CUPTI's headers exist" ON)
option(OPCOST_WITH_NVTX "Emit NVTX ranges where the NVTX3 headers exist" ON)
find_package(CUDAToolkit QUIET)

add_library(opcost_tracers STATIC
  ${CMAKE_CURRENT_LIST_DIR}/nvml_clock.c)
target_include_directories(opcost_tracers PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(opcost_tracers PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_tracers PUBLIC opcost_measure Threads::Threads
  ${CMAKE_DL_LIBS})


# Tests: stand-in libraries (MODULEs, dlopen'ed by path) for what needs a
# driver, the C tests' harness (c_samples.c).
macro(opcost_tracer_test t)
  add_executable(${t} ${PROJECT_SOURCE_DIR}/tests/c/${t}.c
    ${PROJECT_SOURCE_DIR}/tests/c/c_samples.c)
  target_link_libraries(${t} PRIVATE opcost_tracers rowops_testref)
  target_compile_options(${t} PRIVATE ${OPCOST_WARNINGS})
endmacro()

add_library(fake_nvml MODULE ${PROJECT_SOURCE_DIR}/tests/c/fake_nvml.c)
target_compile_options(fake_nvml PRIVATE ${OPCOST_WARNINGS})
opcost_tracer_test(test_nvml_clock)
add_test(NAME test_nvml_clock
  COMMAND test_nvml_clock $<TARGET_FILE:fake_nvml>)


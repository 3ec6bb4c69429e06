# bench/tracers/: what records time, below the measurement that uses it:
# the monotonic clock (timer.c), the event record every tracer converts to
# (events.h), CUPTI's Activity API for the GPU attribution pass
# (cupti_tracer.c), NVTX ranges of a run (nvtx_ranges.c), NVML's SM clock
# (nvml_clock.c). Torch-free. Every library is loaded at
# run time (or, NVTX, is header-only), so a CPU-only build and a machine
# without a driver still run; building needs only the CUPTI and NVTX3
# headers of the CUDA toolkit, where it is found, else stubs. Included by
# the top-level CMakeLists.txt after enable_testing(), before driver.cmake.
option(OPCOST_WITH_CUPTI "Build the CUPTI tracer where CUPTI's headers exist" ON)
option(OPCOST_WITH_NVTX "Emit NVTX ranges where the NVTX3 headers exist" ON)
find_package(CUDAToolkit QUIET)
find_package(Threads REQUIRED)

add_library(opcost_tracers STATIC
  ${CMAKE_CURRENT_LIST_DIR}/tracers/timer.c
  ${CMAKE_CURRENT_LIST_DIR}/tracers/events.c
  ${CMAKE_CURRENT_LIST_DIR}/tracers/cupti_tracer.c
  ${CMAKE_CURRENT_LIST_DIR}/tracers/nvtx_ranges.c
  ${CMAKE_CURRENT_LIST_DIR}/tracers/nvml_clock.c)
target_include_directories(opcost_tracers PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/tracers)
target_compile_options(opcost_tracers PRIVATE ${OPCOST_WARNINGS})
target_link_libraries(opcost_tracers PUBLIC Threads::Threads ${CMAKE_DL_LIBS})

# CUPTI: headers only; the library is dlopen'ed (soname first, then this
# toolkit's). Never CUDA::cupti itself, nor the driver stub.
set(OPCOST_HAVE_CUPTI OFF)
if(OPCOST_WITH_CUPTI AND TARGET CUDA::cupti AND CUDAToolkit_CUPTI_INCLUDE_DIR)
  set(OPCOST_HAVE_CUPTI ON)
  set(OPCOST_CUPTI_INCLUDES ${CUDAToolkit_CUPTI_INCLUDE_DIR}
    ${CUDAToolkit_INCLUDE_DIRS})
  set(OPCOST_CUPTI_DEFINES
    OPCOST_CUPTI_TOOLKIT_LIBRARY="${CUDA_cupti_LIBRARY}")
  target_include_directories(opcost_tracers SYSTEM PRIVATE
    ${OPCOST_CUPTI_INCLUDES})
  target_compile_definitions(opcost_tracers PRIVATE OPCOST_HAVE_CUPTI=1
    ${OPCOST_CUPTI_DEFINES})
endif()
set(OPCOST_HAVE_NVTX OFF)
if(OPCOST_WITH_NVTX AND TARGET CUDA::nvtx3)
  set(OPCOST_HAVE_NVTX ON)
  target_compile_definitions(opcost_tracers PRIVATE OPCOST_HAVE_NVTX=1)
  target_link_libraries(opcost_tracers PRIVATE CUDA::nvtx3)
endif()
message(STATUS
  "opcost: CUPTI tracer ${OPCOST_HAVE_CUPTI}, NVTX ranges ${OPCOST_HAVE_NVTX}")

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

if(OPCOST_HAVE_CUPTI)
  add_library(fake_cupti MODULE ${PROJECT_SOURCE_DIR}/tests/c/fake_cupti.c)
  target_include_directories(fake_cupti SYSTEM PRIVATE ${OPCOST_CUPTI_INCLUDES})
  target_compile_definitions(fake_cupti PRIVATE ${OPCOST_CUPTI_DEFINES})
  target_compile_options(fake_cupti PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(fake_cupti PRIVATE ${CMAKE_DL_LIBS})
  foreach(t test_cupti_buffer test_cupti_unavailable test_cupti_tracer)
    opcost_tracer_test(${t})
    target_include_directories(${t} SYSTEM PRIVATE ${OPCOST_CUPTI_INCLUDES})
  endforeach()
  add_test(NAME test_cupti_buffer COMMAND test_cupti_buffer)
  # 77: CUPTI opens here (a GPU machine), nothing unavailable to test
  add_test(NAME test_cupti_unavailable COMMAND test_cupti_unavailable)
  set_tests_properties(test_cupti_unavailable PROPERTIES SKIP_RETURN_CODE 77)
  add_test(NAME test_cupti_tracer
    COMMAND test_cupti_tracer $<TARGET_FILE:fake_cupti>)
endif()

if(OPCOST_HAVE_NVTX)
  # the NVTX tool the ranges are tested through, and its log's checker
  add_library(nvtx_inject MODULE ${PROJECT_SOURCE_DIR}/tests/c/nvtx_inject.c)
  target_compile_options(nvtx_inject PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(nvtx_inject PRIVATE CUDA::nvtx3 Threads::Threads)
  add_executable(nvtx_check ${PROJECT_SOURCE_DIR}/tests/c/nvtx_check.c)
  target_compile_options(nvtx_check PRIVATE ${OPCOST_WARNINGS})
  opcost_tracer_test(test_nvtx_ranges)
  add_test(NAME test_nvtx_ranges
    COMMAND test_nvtx_ranges ${CMAKE_BINARY_DIR}/nvtx_ranges.log)
  set_tests_properties(test_nvtx_ranges PROPERTIES ENVIRONMENT
    "NVTX_INJECTION64_PATH=$<TARGET_FILE:nvtx_inject>;OPCOST_NVTX_LOG=${CMAKE_BINARY_DIR}/nvtx_ranges.log")
endif()

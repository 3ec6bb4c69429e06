# bench/ab/: `opcost ab`, two builds compared in lockstep rounds: a
# point of both sides (ab_coordinator.c), the workers started, bounded and
# stopped (ab_sides.c), what each loaded (ab_library.c), the worker each
# build runs (ab_worker.c), the messages between them (ab_wire.c) and the
# verdicts after the last point (ab_verdicts.c). Above the engine (measure/),
# whose points and rounds it runs; needs libtorch. Builds opcost_ab (its
# test needs the driver: driver.cmake). Included by the top-level
# CMakeLists.txt after enable_testing().
if(ROWOPS_WITH_TORCH)
  file(GLOB OPCOST_AB_SOURCES CONFIGURE_DEPENDS
    ${CMAKE_CURRENT_LIST_DIR}/ab/*.c)
  add_library(opcost_ab STATIC ${OPCOST_AB_SOURCES})
  target_include_directories(opcost_ab PUBLIC ${CMAKE_CURRENT_LIST_DIR}/ab)
  # a worker describes its host with the source tree's commit (hostinfo.h)
  target_compile_definitions(opcost_ab PRIVATE
    OPCOST_SOURCE_DIR="${CMAKE_SOURCE_DIR}" _POSIX_C_SOURCE=200809L)
  target_compile_options(opcost_ab PRIVATE ${OPCOST_WARNINGS})
  target_link_libraries(opcost_ab PUBLIC opcost_measure_torch)
endif()

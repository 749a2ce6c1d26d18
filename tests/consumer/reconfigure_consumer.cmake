# cmake -P reconfigure_consumer.cmake: configure tests/consumer against the installed cdpkit with
# the CUDAARCHS environment variable (ARCHITECTURES), then again in the same build folder without
# it, and check that the consumer target keeps ARCHITECTURES both times. CMake reads CUDAARCHS at
# the first configure only, into a cache entry that looks like CMake's own default afterwards:
# the choice must be remembered, never replaced by cdpkit's architectures.
# Variables (-D): PREFIX, CONSUMER_SOURCE_DIR, CONSUMER_BUILD_DIR, GENERATOR, CUDA_COMPILER,
# CXX_COMPILER, ARCHITECTURES.
foreach(var PREFIX CONSUMER_SOURCE_DIR CONSUMER_BUILD_DIR GENERATOR ARCHITECTURES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "reconfigure_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "," ";" ARCHITECTURES "${ARCHITECTURES}")  # (a list travels with commas)
file(REMOVE_RECURSE ${CONSUMER_BUILD_DIR})
set(args -S ${CONSUMER_SOURCE_DIR} -B ${CONSUMER_BUILD_DIR} -G ${GENERATOR} --no-warn-unused-cli
         -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
foreach(pass "with CUDAARCHS" "again without it")
  if(pass STREQUAL "with CUDAARCHS")
    string(REPLACE ";" "\\;" archs_text "${ARCHITECTURES}")  # one argument, even for a list
    set(env_args "CUDAARCHS=${archs_text}")
  else()
    set(env_args --unset=CUDAARCHS)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_args} ${CMAKE_COMMAND} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "reconfigure_consumer.cmake: the configure ${pass} failed:\n${out}\n${err}")
  endif()
  file(READ ${CONSUMER_BUILD_DIR}/consumer_architectures.txt got)
  if(NOT got STREQUAL "${ARCHITECTURES}")
    message(FATAL_ERROR "reconfigure_consumer.cmake: configured ${pass}, the consumer is built for "
                        "'${got}', not the '${ARCHITECTURES}' CUDAARCHS chose:\n${out}")
  endif()
  message(STATUS "reconfigure_consumer.cmake: configured ${pass}: built for ${got}")
endforeach()

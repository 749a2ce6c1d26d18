# cmake -P configure_consumer.cmake: configure tests/consumer against the installed cdpkit (the
# prefix build_consumer.cmake made) in a way that must be refused, and check the error.
# Variables (-D): PREFIX, CONSUMER_SOURCE_DIR, CONSUMER_BUILD_DIR, GENERATOR, CUDA_COMPILER,
# CXX_COMPILER, ARCHITECTURES, MODE (ok or no_enable_cdp), EXPECT (a regular expression the
# configure output must match).
foreach(var PREFIX CONSUMER_SOURCE_DIR CONSUMER_BUILD_DIR GENERATOR ARCHITECTURES MODE EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "configure_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "," ";" ARCHITECTURES "${ARCHITECTURES}")  # (a list travels with commas)
file(REMOVE_RECURSE ${CONSUMER_BUILD_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${CONSUMER_BUILD_DIR} -G ${GENERATOR}
                        --no-warn-unused-cli -DCMAKE_PREFIX_PATH=${PREFIX}
                        -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
                        "-DCMAKE_CUDA_ARCHITECTURES=${ARCHITECTURES}" -DCONSUMER_MODE=${MODE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " text "${out} ${err}")  # CMake wraps its messages
if(rc EQUAL 0)
  message(FATAL_ERROR "configure_consumer.cmake: the configure (mode ${MODE}, architectures ${ARCHITECTURES}) "
                      "succeeded; it must be refused with a message matching '${EXPECT}'")
endif()
if(NOT text MATCHES "${EXPECT}")
  message(FATAL_ERROR "configure_consumer.cmake: the configure was refused, but its message does not match "
                      "'${EXPECT}':\n${out}\n${err}")
endif()
string(REGEX MATCH "cdpkit: [^.]*\\." first "${text}")
message(STATUS "configure_consumer.cmake: refused as expected: ${first}")

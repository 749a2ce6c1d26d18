# cmake -P build_consumer.cmake: install the cdpkit build into a fresh prefix, then configure and
# build tests/consumer against it, as an adopter would. Variables (-D): CDPKIT_BUILD_DIR, PREFIX,
# CONSUMER_SOURCE_DIR, CONSUMER_BUILD_DIR, GENERATOR, CUDA_COMPILER, CXX_COMPILER, BUILD_TYPE.
foreach(var CDPKIT_BUILD_DIR PREFIX CONSUMER_SOURCE_DIR CONSUMER_BUILD_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

function(step what)
  message(STATUS "consumer test: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${what} failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD_DIR})
step("install cdpkit into ${PREFIX}"
     ${CMAKE_COMMAND} --install ${CDPKIT_BUILD_DIR} --prefix ${PREFIX})
# nlohmann_json and CLI11 disabled: find_package(cdpkit) alone must not need them.
step("configure the consumer project"
     ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${CONSUMER_BUILD_DIR} -G ${GENERATOR} --no-warn-unused-cli
     -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
     -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON)
step("build the consumer project" ${CMAKE_COMMAND} --build ${CONSUMER_BUILD_DIR})

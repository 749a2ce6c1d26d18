# cmake -P build_consumer.cmake: install the cdpkit build into a fresh prefix, then configure and
# build tests/consumer against it, as an adopter would, with an explicit architecture list (the
# one cdpkit was built for); then check that its link line holds neither cuSPARSE nor FreeType
# (the optional parts it did not ask for) and print the program's size.
# Variables (-D): CDPKIT_BUILD_DIR, PREFIX, CONSUMER_SOURCE_DIR, CONSUMER_BUILD_DIR, GENERATOR,
# CUDA_COMPILER, CXX_COMPILER, BUILD_TYPE, ARCHITECTURES.
foreach(var CDPKIT_BUILD_DIR PREFIX CONSUMER_SOURCE_DIR CONSUMER_BUILD_DIR GENERATOR ARCHITECTURES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

string(REPLACE "," ";" ARCHITECTURES "${ARCHITECTURES}")  # (a list travels with commas)
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
# nlohmann_json, CLI11 and FreeType disabled: find_package(cdpkit) alone must not need them.
step("configure the consumer project for CUDA architectures ${ARCHITECTURES}"
     ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${CONSUMER_BUILD_DIR} -G ${GENERATOR} --no-warn-unused-cli
     -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
     "-DCMAKE_CUDA_ARCHITECTURES=${ARCHITECTURES}"
     -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
     -DCMAKE_DISABLE_FIND_PACKAGE_Freetype=ON)
step("build the consumer project" ${CMAKE_COMMAND} --build ${CONSUMER_BUILD_DIR})

# The architectures were honoured: the target is built for those given, not replaced by cdpkit's.
file(READ ${CONSUMER_BUILD_DIR}/consumer_architectures.txt built_for)
if(NOT built_for STREQUAL "${ARCHITECTURES}")
  message(FATAL_ERROR "consumer test: the consumer asked for CUDA architectures ${ARCHITECTURES} and is built for "
                      "${built_for}")
endif()

# The link line: no optional part's library.
if(GENERATOR MATCHES "Ninja")
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${CONSUMER_BUILD_DIR} -- -t commands cdpkit_consumer
                  OUTPUT_VARIABLE commands RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ninja -t commands failed (${rc})")
  endif()
else()
  file(GLOB_RECURSE link_files ${CONSUMER_BUILD_DIR}/CMakeFiles/cdpkit_consumer.dir/link.txt)
  set(commands "")
  foreach(f IN LISTS link_files)
    file(READ ${f} text)
    string(APPEND commands "${text}")
  endforeach()
endif()
string(TOLOWER "${commands}" commands_lower)
foreach(part cusparse freetype)
  if(commands_lower MATCHES "${part}")
    message(FATAL_ERROR "consumer test: the consumer's build commands name ${part}, a part it did not ask for:\n"
                        "${commands}")
  endif()
endforeach()
if(NOT commands_lower MATCHES "cudart")
  message(FATAL_ERROR "consumer test: no build command could be read (no cudart in):\n${commands}")
endif()

file(SIZE ${CONSUMER_BUILD_DIR}/cdpkit_consumer consumer_bytes)
math(EXPR consumer_kib "${consumer_bytes} / 1024")
set(libraries "")
file(GLOB archives ${PREFIX}/lib/libcdpkit*.a)
foreach(archive IN LISTS archives)
  file(SIZE ${archive} bytes)
  math(EXPR kib "${bytes} / 1024")
  get_filename_component(name ${archive} NAME)
  string(APPEND libraries " ${name} ${kib} KiB;")
endforeach()
message(STATUS "consumer test: cdpkit_consumer (cdpkit::core) is ${consumer_kib} KiB; installed:${libraries}")

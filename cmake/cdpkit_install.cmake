# Install rules and the CMake package (find_package(cdpkit)).
#
# Each installed library is one package component with its own export set:
#   cdpkit     cdpkit::cdpkit     the CUDA library, all families (the default component)
#   core       cdpkit::core       headers, launch layer, loop-to-child, the families' host side
#   <family>   cdpkit::<family>   quicksort, bfs, tree, quadtree, spmv, bezier: a family's kernels
#   cusparse   cdpkit::cusparse   the cusparse variant of SpMV (links cuSPARSE)
#   fonts      cdpkit::fonts      font inputs of the Bézier family (links FreeType; where it was found)
#   profiling  cdpkit::profiling  trace sessions and the profile writer
#   report     cdpkit::report     profile JSON -> HTML (pure C++), and the cdpkit-report tool
# A subdirectory declares its library with cdpkit_install_library() next to the target; the top
# level calls cdpkit_install_package() last, which writes cdpkitConfig.cmake. What each component
# needs from other packages is read from the targets' link interfaces (CUDA:: -> CUDAToolkit,
# Threads:: -> Threads, nlohmann_json:: -> nlohmann_json, CLI11:: -> CLI11; cdpkit targets ->
# their components), so the package config asks (find_dependency) only for what the requested
# components link, and follows changes of the link lines by itself.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CDPKIT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cdpkit CACHE STRING
    "Where the cdpkit CMake package files are installed (relative to the prefix)")
mark_as_advanced(CDPKIT_INSTALL_CMAKEDIR)

# cdpkit_install_library(<target> COMPONENT <name> [HEADERS <dir>...] [PROGRAMS <exe>...])
#   Installs <target> as cdpkit::<name> (component <name>), the headers below each HEADERS
#   directory (*.hpp, *.cuh, *.h, keeping their paths, into include/), and the PROGRAMS into bin/.
#   Include directories of the build tree are kept for in-tree users only ($<BUILD_INTERFACE>);
#   installed, the target's include directory is <prefix>/include.
function(cdpkit_install_library target)
  cmake_parse_arguments(arg "" "COMPONENT" "HEADERS;PROGRAMS" ${ARGN})
  if(NOT CDPKIT_INSTALL)
    return()
  endif()
  if(NOT arg_COMPONENT)
    message(FATAL_ERROR "cdpkit_install_library(${target}): COMPONENT is required")
  endif()
  set(component ${arg_COMPONENT})

  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(dirs)
    set(wrapped "")
    foreach(dir IN LISTS dirs)
      if(dir MATCHES "^\\$<")
        list(APPEND wrapped "${dir}")
      else()
        list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
      endif()
    endforeach()
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
  endif()
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${component})

  install(TARGETS ${target} EXPORT cdpkit-${component}-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${component}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  foreach(dir IN LISTS arg_HEADERS)
    if(NOT IS_ABSOLUTE "${dir}")
      set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${dir})
    endif()
    install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT ${component}
            FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh" PATTERN "*.h")
  endforeach()
  if(arg_PROGRAMS)
    install(TARGETS ${arg_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${component})
  endif()
  install(EXPORT cdpkit-${component}-targets NAMESPACE cdpkit::
          DESTINATION ${CDPKIT_INSTALL_CMAKEDIR} COMPONENT ${component})

  set_property(GLOBAL APPEND PROPERTY CDPKIT_INSTALL_COMPONENTS ${component})
  set_property(GLOBAL PROPERTY CDPKIT_INSTALL_TARGET_${component} ${target})
  set_property(GLOBAL PROPERTY CDPKIT_INSTALL_COMPONENT_OF_${target} ${component})
endfunction()

# The package a link item comes from, as find_dependency arguments ("" for none).
function(_cdpkit_package_of item out)
  set(pkg "")
  if(item MATCHES "^CUDA::")
    set(pkg "CUDAToolkit ${CUDAToolkit_VERSION_MAJOR}")
  elseif(item MATCHES "^Threads::")
    set(pkg "Threads")
  elseif(item MATCHES "^nlohmann_json::")
    set(pkg "nlohmann_json 3")
  elseif(item MATCHES "^CLI11::")
    set(pkg "CLI11")
  elseif(item MATCHES "^ZLIB::")
    set(pkg "ZLIB")
  elseif(item MATCHES "^Freetype::")
    set(pkg "Freetype")
  elseif(item MATCHES "::")
    message(FATAL_ERROR "cdpkit_install_package: the installed targets link ${item}; say in "
                        "cmake/cdpkit_install.cmake which package provides it")
  endif()
  set(${out} "${pkg}" PARENT_SCOPE)
endfunction()

# cdpkit_install_package(): cdpkitConfig.cmake, cdpkitConfigVersion.cmake and cdpkit_cdp.cmake.
function(cdpkit_install_package)
  if(NOT CDPKIT_INSTALL)
    return()
  endif()
  get_property(components GLOBAL PROPERTY CDPKIT_INSTALL_COMPONENTS)
  set(table "")
  foreach(component IN LISTS components)
    get_property(target GLOBAL PROPERTY CDPKIT_INSTALL_TARGET_${component})
    get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
    if(NOT links)
      set(links "")
    endif()
    # Private dependencies of a static library are $<LINK_ONLY:...> here: needed all the same.
    string(REGEX REPLACE "\\$<LINK_ONLY:([^>]*)>" "\\1" links "${links}")
    set(requires "")
    set(packages "")
    foreach(item IN LISTS links)
      if(item MATCHES "^\\$<" OR item STREQUAL "")
        continue()  # other generator expressions (e.g. $<BUILD_INTERFACE:...>) stay in the tree
      endif()
      if(TARGET ${item})
        get_target_property(aliased ${item} ALIASED_TARGET)
        if(aliased)
          set(item ${aliased})
        endif()
        get_property(dep_component GLOBAL PROPERTY CDPKIT_INSTALL_COMPONENT_OF_${item})
        if(dep_component)
          list(APPEND requires ${dep_component})
          continue()
        endif()
      endif()
      _cdpkit_package_of("${item}" pkg)
      if(pkg)
        list(APPEND packages "${pkg}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES requires)
    list(REMOVE_DUPLICATES packages)
    string(APPEND table "set(_cdpkit_requires_${component} ${requires})\n")
    set(quoted "")
    foreach(pkg IN LISTS packages)
      string(APPEND quoted " [[${pkg}]]")
    endforeach()
    string(APPEND table "set(_cdpkit_packages_${component}${quoted})\n")
  endforeach()
  set(CDPKIT_PACKAGE_COMPONENTS "${components}")
  # The architectures the device code was built for, as a list of numbers: native, all and
  # all-major are recorded as what they stood for in this build.
  _cdpkit_expand_architectures(CDPKIT_RECORDED_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
  set(CDPKIT_PACKAGE_TABLE "${table}")

  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cdpkitConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/cdpkitConfig.cmake
                                INSTALL_DESTINATION ${CDPKIT_INSTALL_CMAKEDIR})
  # 0.x: minor versions may change the API.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/cdpkitConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/cdpkitConfig.cmake
                ${PROJECT_BINARY_DIR}/cdpkitConfigVersion.cmake
                ${PROJECT_SOURCE_DIR}/cmake/cdpkit_cdp.cmake
          DESTINATION ${CDPKIT_INSTALL_CMAKEDIR} COMPONENT cdpkit)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/cdpkit COMPONENT cdpkit)
endfunction()

# cdpkit_enable_cdp(<target>): what a target that links cdpkit's CUDA libraries (cdpkit::core, a
# family such as cdpkit::quicksort, or cdpkit::cdpkit, all of them) needs for CUDA Dynamic
# Parallelism. Used inside the project and shipped with the installed package (find_package(cdpkit)
# defines it), so a consumer calls it on each of its targets that link them.
#
# Why: cdpkit's kernels launch child grids from the device. Device-side launches need relocatable
# device code (nvcc -rdc=true) in every translation unit that instantiates a launching template
# (for_each_segment, launch_items, ... with your lambdas), a device-link step in the executable or
# shared library that resolves them together with cdpkit's own device code, and the device
# runtime library (cudadevrt). The imported core and families already make CMake device-link every
# executable that links them (their CUDA_SEPARABLE_COMPILATION property) and carry --extended-lambda;
# what CMake cannot carry through a target is the separable compilation of *your* sources, so:
#   - CUDA_SEPARABLE_COMPILATION ON (relocatable device code for the target's own .cu files),
#   - POSITION_INDEPENDENT_CODE ON (cdpkit is built position independent; shared libraries work),
#   - CUDA_RUNTIME_LIBRARY Shared (cdpkit links the shared CUDA runtime; one runtime per process;
#     cudadevrt comes with it),
#   - --extended-lambda (for __device__ lambdas),
#   - CUDA_ARCHITECTURES: the device code of one device link must be compiled for the same
#     architectures, so with an installed cdpkit (cdpkit_CUDA_ARCHITECTURES records what it was
#     built for):
#       * a target whose architectures were chosen (CMAKE_CUDA_ARCHITECTURES given on the command
#         line or set before project(), CUDAARCHS, or the target's own property) keeps them when
#         cdpkit was built for each of them, and configuring stops with an error naming both lists
#         otherwise;
#       * a target left at CMake's default (nvcc's oldest supported architecture, chosen by nobody)
#         is built for cdpkit's architectures, and a status line says so.
#     Inside cdpkit's own build the targets share CMAKE_CUDA_ARCHITECTURES and nothing is changed.
#
# A target that links cdpkit::cdpkit (directly or through other targets) without this call would
# link two CUDA runtimes (cudart_static, CMake's default, and cdpkit's shared one) and miss the
# device link: configuring stops with an error naming the target (_cdpkit_check_cdp_targets below,
# run when the top-level CMakeLists.txt has been read). A target that uses only host code of
# cdpkit and runs none of its kernels (cdpkit's own injection library) says so with the target
# property CDPKIT_HOST_ONLY TRUE and is not checked.

# native, all and all-major -> the architectures they stand for with this compiler and machine;
# a list of numbers is kept as it is. (Also what the installed package records: cdpkit_install.cmake.)
function(_cdpkit_expand_architectures out)
  set(archs "${ARGN}")
  if(archs STREQUAL "native")
    set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  elseif(archs STREQUAL "all")
    set(archs "${CMAKE_CUDA_ARCHITECTURES_ALL}")
  elseif(archs STREQUAL "all-major")
    set(archs "${CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR}")
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# "90-real", "90a", "90-virtual" -> "90", "90a": what a device link needs SASS for.
function(_cdpkit_base_architectures out)
  set(bases "")
  foreach(a IN LISTS ARGN)
    string(REGEX REPLACE "-(real|virtual)$" "" a "${a}")
    list(APPEND bases "${a}")
  endforeach()
  list(REMOVE_DUPLICATES bases)
  set(${out} "${bases}" PARENT_SCOPE)
endfunction()

function(cdpkit_enable_cdp target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "cdpkit_enable_cdp(${target}): no such target (call it after add_executable/add_library)")
  endif()
  set_target_properties(${target} PROPERTIES
    CUDA_SEPARABLE_COMPILATION ON
    POSITION_INDEPENDENT_CODE ON
    CUDA_RUNTIME_LIBRARY Shared
    CDPKIT_CDP_ENABLED TRUE)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
  if(NOT DEFINED cdpkit_CUDA_ARCHITECTURES)
    return()  # inside cdpkit's build: one CMAKE_CUDA_ARCHITECTURES for all
  endif()
  get_target_property(archs ${target} CUDA_ARCHITECTURES)
  # Left at CMake's default: the cache entry CMake itself wrote at project() (its help string),
  # not given on the command line, by CUDAARCHS or by a set() before project(). That is decided
  # once, at the first configure, and remembered: the entry looks the same later when CUDAARCHS
  # gave it (the variable is read at the first configure only) or when a later -D changed it.
  if(NOT DEFINED CACHE{_CDPKIT_CMAKE_DEFAULT_CUDA_ARCHITECTURES})
    get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    if(help STREQUAL "CUDA architectures" AND NOT DEFINED ENV{CUDAARCHS}
       AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
      set(default_archs "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
    else()
      set(default_archs "")  # chosen at the first configure: never CMake's default afterwards
    endif()
    set(_CDPKIT_CMAKE_DEFAULT_CUDA_ARCHITECTURES "${default_archs}" CACHE INTERNAL
        "CMake's default CMAKE_CUDA_ARCHITECTURES at the first configure (empty: one was chosen)")
  endif()
  set(default_archs "$CACHE{_CDPKIT_CMAKE_DEFAULT_CUDA_ARCHITECTURES}")
  if(NOT archs OR (default_archs AND archs STREQUAL default_archs
                   AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL default_archs))
    message(STATUS "cdpkit: ${target} is built for CUDA architectures ${cdpkit_CUDA_ARCHITECTURES}, "
                   "those of the installed cdpkit (none was chosen; CMake's default was ${archs})")
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${cdpkit_CUDA_ARCHITECTURES}")
    return()
  endif()
  _cdpkit_expand_architectures(archs ${archs})
  _cdpkit_base_architectures(wanted ${archs})
  _cdpkit_base_architectures(built ${cdpkit_CUDA_ARCHITECTURES})
  set(missing "")
  foreach(a IN LISTS wanted)
    if(NOT a IN_LIST built)
      list(APPEND missing ${a})
    endif()
  endforeach()
  if(missing OR NOT wanted)
    list(JOIN built ", " built_text)
    list(JOIN missing ", " missing_text)
    get_target_property(asked ${target} CUDA_ARCHITECTURES)
    message(FATAL_ERROR
      "cdpkit: ${target} is built for CUDA architectures \"${asked}\", but the installed cdpkit "
      "holds device code for ${built_text} only (missing: ${missing_text}). One device link needs "
      "every architecture in both: build ${target} for a subset of ${built_text} "
      "(-DCMAKE_CUDA_ARCHITECTURES=...), or rebuild cdpkit with -DCMAKE_CUDA_ARCHITECTURES "
      "covering yours.")
  endif()
endfunction()

# Every executable, shared or module library that links a target marked CDPKIT_NEEDS_CDP
# (cdpkit::core, the families; so cdpkit::cdpkit too), directly or through other targets, must
# have had cdpkit_enable_cdp.
function(_cdpkit_links_cdp target out)  # out: TRUE when <target>'s link closure holds cdpkit
  set(seen "")
  set(queue ${target})
  set(found FALSE)
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      list(APPEND queue ${aliased})
      continue()
    endif()
    get_target_property(needs ${t} CDPKIT_NEEDS_CDP)
    if(needs)
      set(found TRUE)
      break()
    endif()
    get_target_property(type ${t} TYPE)
    get_target_property(imported ${t} IMPORTED)
    # A target's own link line for the one checked and for static libraries built here (their
    # private links reach the final link too); the interface for every target.
    set(properties INTERFACE_LINK_LIBRARIES)
    if(t STREQUAL target OR (type STREQUAL "STATIC_LIBRARY" AND NOT imported))
      list(APPEND properties LINK_LIBRARIES)
    endif()
    set(links "")
    foreach(property IN LISTS properties)
      get_target_property(items ${t} ${property})
      if(items)
        list(APPEND links ${items})
      endif()
    endforeach()
    foreach(item IN LISTS links)
      if(item MATCHES "^::@")
        continue()  # directory-scoped link markers
      endif()
      if(item MATCHES "\\$<")
        # A generator expression ($<LINK_ONLY:...>, $<$<CONFIG:Release>:...>,
        # $<LINK_LIBRARY:WHOLE_ARCHIVE,...>, nested ones): every name in it that is a target is
        # followed, whatever the condition (the check errs towards asking for cdpkit_enable_cdp).
        string(REGEX MATCHALL "[A-Za-z0-9_.+-]+(::[A-Za-z0-9_.+-]+)*" names "${item}")
        foreach(name IN LISTS names)
          if(TARGET ${name})
            list(APPEND queue ${name})
          endif()
        endforeach()
      elseif(item)
        list(APPEND queue ${item})
      endif()
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(_cdpkit_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _cdpkit_targets_below(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

function(_cdpkit_check_cdp_targets)
  _cdpkit_targets_below(${CMAKE_SOURCE_DIR} targets)
  set(bad "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      continue()
    endif()
    get_target_property(enabled ${t} CDPKIT_CDP_ENABLED)
    get_target_property(host_only ${t} CDPKIT_HOST_ONLY)
    if(enabled OR host_only)
      continue()
    endif()
    _cdpkit_links_cdp(${t} links)
    if(links)
      list(APPEND bad ${t})
    endif()
  endforeach()
  if(bad)
    list(JOIN bad ", " bad_text)
    message(FATAL_ERROR
      "cdpkit: ${bad_text} link(s) cdpkit's CUDA libraries without cdpkit_enable_cdp(<target>). Their kernels "
      "launch child grids from the device: the target needs relocatable device code, a device link "
      "and the shared CUDA runtime (else two runtimes are linked). Add cdpkit_enable_cdp(<target>) "
      "after the target's target_link_libraries (cdpkit_cdp.cmake says what it sets).")
  endif()
endfunction()

# Once per configure, whichever way cdpkit came in (find_package, possibly several times, or
# add_subdirectory): the check runs when the top-level CMakeLists.txt has been read.
get_property(_cdpkit_check_deferred GLOBAL PROPERTY CDPKIT_CDP_CHECK_DEFERRED)
if(NOT _cdpkit_check_deferred)
  set_property(GLOBAL PROPERTY CDPKIT_CDP_CHECK_DEFERRED TRUE)
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _cdpkit_check_cdp_targets)
endif()
unset(_cdpkit_check_deferred)

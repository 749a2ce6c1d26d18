# The default CUDA architectures, decided before project() (which would otherwise pick the
# compiler's default). An explicit choice always wins: -DCMAKE_CUDA_ARCHITECTURES=..., a preset's
# cache variable, or the CUDAARCHS environment variable. Without one, cdpkit builds for the GPUs
# of the building machine (nvidia-smi's compute capabilities, e.g. "9.0" -> 90), and for 90
# (H100/H200) where there is no GPU or no driver (CI). The value is cached: detected once per
# build tree. Installed packages record it (cdpkit_CUDA_ARCHITECTURES), since a program that
# device-links cdpkit must be built for the same architectures.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(_cdpkit_archs "")
  find_program(_cdpkit_nvidia_smi nvidia-smi NO_CACHE)
  if(_cdpkit_nvidia_smi)
    execute_process(COMMAND "${_cdpkit_nvidia_smi}" --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE _cdpkit_caps RESULT_VARIABLE _cdpkit_rc
                    ERROR_QUIET TIMEOUT 30)
    if(_cdpkit_rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _cdpkit_caps "${_cdpkit_caps}")
      foreach(_cdpkit_cap IN LISTS _cdpkit_caps)
        string(REPLACE "." "" _cdpkit_cap "${_cdpkit_cap}")
        list(APPEND _cdpkit_archs "${_cdpkit_cap}")
      endforeach()
      list(REMOVE_DUPLICATES _cdpkit_archs)
    endif()
  endif()
  if(_cdpkit_archs)
    set(_cdpkit_why "the GPUs of this machine")
  else()
    set(_cdpkit_archs 90)
    set(_cdpkit_why "no GPU found: the default")
  endif()
  message(STATUS "cdpkit: CUDA architectures ${_cdpkit_archs} (${_cdpkit_why}; "
                 "override with -DCMAKE_CUDA_ARCHITECTURES=...)")
  set(CMAKE_CUDA_ARCHITECTURES "${_cdpkit_archs}" CACHE STRING
      "CUDA architectures to build for (default: the building machine's GPUs, else 90)")
  unset(_cdpkit_archs)
  unset(_cdpkit_caps)
  unset(_cdpkit_rc)
  unset(_cdpkit_why)
endif()

# cdpkit_enable_cdp(<target>): what a target that links cdpkit::cdpkit needs for CUDA Dynamic
# Parallelism. Used inside the project and shipped with the installed package (find_package(cdpkit)
# defines it), so a consumer calls it on each of its targets that link cdpkit::cdpkit.
#
# Why: cdpkit's kernels launch child grids from the device. Device-side launches need relocatable
# device code (nvcc -rdc=true) in every translation unit that instantiates a launching template
# (for_each_segment, launch_items, ... with your lambdas), a device-link step in the executable or
# shared library that resolves them together with cdpkit's own device code, and the device
# runtime library (cudadevrt). The imported cdpkit::cdpkit already makes CMake device-link every
# executable that links it (its CUDA_SEPARABLE_COMPILATION property) and carries --extended-lambda;
# what CMake cannot carry through a target is the separable compilation of *your* sources, so:
#   - CUDA_SEPARABLE_COMPILATION ON (relocatable device code for the target's own .cu files),
#   - POSITION_INDEPENDENT_CODE ON (cdpkit is built position independent; shared libraries work),
#   - CUDA_RUNTIME_LIBRARY Shared (cdpkit links the shared CUDA runtime; one runtime per process;
#     cudadevrt comes with it),
#   - --extended-lambda (for __device__ lambdas),
#   - CUDA_ARCHITECTURES: set to the architectures cdpkit was built for (cdpkit_CUDA_ARCHITECTURES,
#     recorded by the installed package) when the target asks for others, since device code of one
#     device link must be compiled for the same architectures. Inside cdpkit's own build the
#     targets already share CMAKE_CUDA_ARCHITECTURES and nothing is changed.
function(cdpkit_enable_cdp target)
  set_target_properties(${target} PROPERTIES
    CUDA_SEPARABLE_COMPILATION ON
    POSITION_INDEPENDENT_CODE ON
    CUDA_RUNTIME_LIBRARY Shared)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
  if(DEFINED cdpkit_CUDA_ARCHITECTURES)
    get_target_property(archs ${target} CUDA_ARCHITECTURES)
    if(NOT "${archs}" STREQUAL "${cdpkit_CUDA_ARCHITECTURES}")
      message(STATUS "cdpkit: ${target} is built for CUDA architectures "
                     "${cdpkit_CUDA_ARCHITECTURES}, those of the installed cdpkit (was: ${archs})")
      set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${cdpkit_CUDA_ARCHITECTURES}")
    endif()
  endif()
endfunction()

# cdpkit_set_warnings(<target>): the project's warning set for C++ and CUDA sources.
function(cdpkit_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=cross-execution-space-call
                               -Xcudafe=--display_error_number>)
endfunction()

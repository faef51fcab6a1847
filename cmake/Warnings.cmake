# tiercc_warnings(target): the project's warning set, as errors when TIERCC_WERROR is on (CI).
# nvcc (CUDA sources) gets the host-compiler part through -Xcompiler and its own -Werror form:
# the C/C++ flags must not reach it.
function(tiercc_warnings target)
  set(flags -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:${flags}>"
                                           "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
  if(TIERCC_WERROR)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:-Werror>"
                                             "$<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>")
  endif()
endfunction()

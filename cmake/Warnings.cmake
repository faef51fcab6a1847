# tiercc_warnings(target): the project's warning set, as errors when TIERCC_WERROR is on (CI).
function(tiercc_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
  if(TIERCC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

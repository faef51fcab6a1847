# Sanitizer and fuzzing builds (scripts/sanitize.sh runs them). TIERCC_SANITIZE applies to every
# target, the library's layers included, so that a report points into tiercc's own code; a
# sanitizer build reports and stops at the first finding (no recovery), so that a finding fails
# the test that caused it. TIERCC_FUZZ adds libFuzzer's coverage instrumentation everywhere and
# builds tests/fuzz/.
if(TIERCC_SANITIZE)
  if(NOT TIERCC_SANITIZE MATCHES "^(address|undefined|address,undefined|undefined,address|thread)$")
    message(FATAL_ERROR "TIERCC_SANITIZE='${TIERCC_SANITIZE}': use address,undefined or thread")
  endif()
  add_compile_options(-fsanitize=${TIERCC_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TIERCC_SANITIZE})
  message(STATUS "tiercc: sanitizers ${TIERCC_SANITIZE}")
endif()
if(TIERCC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TIERCC_FUZZ needs clang (libFuzzer): configure with CXX=clang++ CC=clang")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "tiercc: libFuzzer targets (tests/fuzz), with address,undefined")
endif()

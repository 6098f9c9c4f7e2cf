# ppt_catch_tests(<target> [PREFIX <text>] [LABELS <label>...])
#
# Registers each Catch2 test case of <target> as its own ctest entry, listed
# after every build by catch_register.py (it says why Catch2's own
# catch_discover_tests is not used). Each entry runs its one case with
# `--warn NoTests`: an entry whose spec matches no case fails instead of
# passing. tests/cmake/check_registration.py checks that the entries ctest
# knows are exactly the cases the binaries hold.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(PPT_CATCH_REGISTER ${CMAKE_CURRENT_LIST_DIR}/catch_register.py)

function(ppt_catch_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PREFIX" "LABELS")
  set(ctest_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_cases.cmake)
  list(JOIN arg_LABELS ";" labels)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${Python3_EXECUTABLE} ${PPT_CATCH_REGISTER} --binary $<TARGET_FILE:${target}>
            --output ${ctest_file} --prefix "${arg_PREFIX}" --labels "${labels}"
            --working-directory ${CMAKE_CURRENT_BINARY_DIR}
    VERBATIM)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  file(WRITE ${include_file}
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()

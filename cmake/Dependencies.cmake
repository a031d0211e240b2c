# Every dependency is a Debian package found here, once, as an IMPORTED target.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
find_package(Threads REQUIRED)

if(KOPT_BUILD_TESTS)
  find_package(doctest 2.4 REQUIRED)
  find_program(KOPT_NINJA ninja REQUIRED)
  find_program(KOPT_CCACHE ccache REQUIRED)
endif()

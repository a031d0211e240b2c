# Every dependency is a Debian package found here, once, as an IMPORTED target.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
# xxhash is used header-only (XXH_INLINE_ALL), so the kopt binary runs where libxxhash is absent.
find_path(KOPT_XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_package(Threads REQUIRED)

if(KOPT_BUILD_TESTS)
  find_package(doctest 2.4 REQUIRED)
  find_program(KOPT_NINJA ninja REQUIRED)
  find_program(KOPT_CCACHE ccache REQUIRED)
endif()

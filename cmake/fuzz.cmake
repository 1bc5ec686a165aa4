# libFuzzer targets: every tests/fuzz/<name>_fuzz.cpp is its own binary
# <name>_fuzz. They link domain/ and the few pure sources of other folders
# listed here (no CAF, no PostgreSQL, no httplib), so the instrumented build
# stays small.
find_package(OpenSSL REQUIRED)

# http/route_pattern: the request router's path matching (pure).
add_library(mg_fuzz_http STATIC ${CMAKE_SOURCE_DIR}/http/route_pattern.cpp)

# The sanitizer options every target runs with (an object, so each binary
# holds it: the runtime only looks the symbol up weakly).
add_library(mg_fuzz_options OBJECT ${CMAKE_SOURCE_DIR}/tests/fuzz/ubsan_options.cpp)
target_compile_definitions(mg_fuzz_options PRIVATE
  MG_FUZZ_UBSAN_SUPPRESSIONS="${CMAKE_SOURCE_DIR}/tests/fuzz/ubsan.supp")

file(GLOB MG_FUZZ_SRC CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/*_fuzz.cpp)
set(MG_FUZZ_TARGETS "")
foreach(src ${MG_FUZZ_SRC})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src} $<TARGET_OBJECTS:mg_fuzz_options>)
  target_link_libraries(${name} PRIVATE mg_fuzz_http mg_domain OpenSSL::Crypto)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  list(APPEND MG_FUZZ_TARGETS ${name})
endforeach()
add_custom_target(fuzz_targets DEPENDS ${MG_FUZZ_TARGETS})
# scripts/fuzz.sh runs what this build holds.
string(REPLACE ";" "\n" MG_FUZZ_LIST "${MG_FUZZ_TARGETS}")
file(WRITE ${CMAKE_BINARY_DIR}/fuzz_targets.txt "${MG_FUZZ_LIST}\n")

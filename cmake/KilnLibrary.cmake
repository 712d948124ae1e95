# kiln_library(NAME <target> [PUBLIC deps...] [PRIVATE deps...])
# One library per top-level folder (docs/ARCHITECTURE.md): every .cc below the calling
# folder is a source. A folder with no sources yet builds an INTERFACE target so
# that dependents can already link it.
function(kiln_library)
  cmake_parse_arguments(ARG "" "NAME" "PUBLIC;PRIVATE" ${ARGN})
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  if(_srcs)
    add_library(${ARG_NAME} STATIC ${_srcs})
    target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  else()
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_PUBLIC})
  endif()
endfunction()

# kiln_library(NAME <target> [PIC] [UMBRELLA] [SOURCES files...]
#              [PUBLIC deps...] [PRIVATE deps...])
# One library per folder (docs/ARCHITECTURE.md): every .cc below the calling
# folder is a source, except below a subfolder that has a CMakeLists.txt of
# its own: that subfolder builds its own target (ir/arith, ir/schedule,
# ir/transform, ir/verify, codegen/runtime, rpc/runner_main), and linking only
# the layers a library names is what makes a wrong-way dependency fail to
# link. The dependencies are the ones the folder's code includes and calls,
# no more (cmake/Dependencies.cmake finds each of them).
#   SOURCES   the sources instead of the glob (proto/: its .proto files).
#   PIC       position independent code, for a library that a shared object
#             embeds (kiln_db embeds the IR and the database).
#   UMBRELLA  no sources: an INTERFACE target that links its PUBLIC
#             dependencies (kiln_ir: every layer of the IR).
# A folder with no sources builds an INTERFACE target too.
function(kiln_library)
  cmake_parse_arguments(ARG "PIC;UMBRELLA" "NAME" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  set(_srcs "")
  if(ARG_SOURCES)
    set(_srcs ${ARG_SOURCES})
  elseif(NOT ARG_UMBRELLA)
    file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
    file(GLOB_RECURSE _own CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*/CMakeLists.txt)
    foreach(_cmakelists ${_own})
      get_filename_component(_dir ${_cmakelists} DIRECTORY)
      string(LENGTH "${_dir}/" _len)
      set(_kept "")
      foreach(_src ${_srcs})
        string(SUBSTRING "${_src}" 0 ${_len} _head)
        if(NOT _head STREQUAL "${_dir}/")
          list(APPEND _kept ${_src})
        endif()
      endforeach()
      set(_srcs ${_kept})
    endforeach()
  endif()
  if(_srcs)
    add_library(${ARG_NAME} STATIC ${_srcs})
    target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
    if(ARG_PIC)
      set_target_properties(${ARG_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
  else()
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_PUBLIC})
  endif()
endfunction()

# kiln_layer_check(<library>): an executable that links every object of the
# library (whole archive) with only the dependencies it declares, so that a
# call into a layer the library does not name (ir/arith calling
# ir/schedule, say) is an undefined reference at build time, even where no
# program of Kiln happens to pull in the object that makes the call.
function(kiln_layer_check lib)
  set(_main ${PROJECT_BINARY_DIR}/kiln_layer_check_main.cc)
  if(NOT EXISTS ${_main})
    file(WRITE ${_main} "int main() { return 0; }\n")
  endif()
  add_executable(${lib}_layer_check ${_main})
  target_link_libraries(${lib}_layer_check PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${lib}>")
endfunction()

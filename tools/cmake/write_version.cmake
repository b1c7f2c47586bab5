# Writes OUTPUT, the definition of gxc::versionString(): the project's VERSION and, in a git
# checkout, the commit it is built from ("+" when files differ from it). Run at every build
# (cmake -P), so the commit is the one built, not the one configured; configure_file rewrites
# OUTPUT only when its text changes, so an unchanged commit rebuilds nothing.
set(GXC_GIT_COMMIT "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit RESULT_VARIABLE status ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(status EQUAL 0 AND commit)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE changes ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(GXC_GIT_COMMIT " (commit ${commit}")
    if(changes)
      string(APPEND GXC_GIT_COMMIT "+")
    endif()
    string(APPEND GXC_GIT_COMMIT ")")
  endif()
endif()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)

# Empties a scratch folder (cmake -DDIR=<path> -P reset_dir.cmake): the fuzz smoke tests start
# from their seed corpus on every run instead of from everything earlier runs added.
if(NOT DIR)
  message(FATAL_ERROR "reset_dir.cmake: pass -DDIR=<folder>")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")

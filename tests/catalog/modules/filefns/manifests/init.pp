# Fixture module for the file-reading core functions (file, find_file,
# find_template, module_directory): its files/ and templates/ hold the
# files the core_* catalog cases look up.
class filefns {}

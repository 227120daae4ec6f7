# glob of something that is neither a string nor an array.
glob(1)

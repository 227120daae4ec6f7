$x = @(END)
never closed

from lakehouse.cli import main

main()  # ends the process with the command's status

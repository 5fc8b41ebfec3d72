from taskforge.cli import main

main()

import MsglogCLI
MsglogCLI.main()

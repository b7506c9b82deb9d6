import MsglogCLI

MsglogCLI.main()

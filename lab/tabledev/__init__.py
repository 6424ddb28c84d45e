"""Developer's tools: the virtual boards (simulator on the MicroPython unix port, pico_sim on an
emulated RP2040), the bench driver that moves their pins, the hardware jig's host side, fault
campaigns and the scripted demo. Operations (tablectl) never need these to run a table."""

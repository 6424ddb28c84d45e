# pico's files for a frozen MicroPython build, written by `python -m tablectl.deploy lists`
# from tablectl/deploy.py, the one list of them (tests/firmware/test_deploy_set.py checks).
include("$(PORT_DIR)/boards/manifest.py")
module('main.py')
package('table', files=['__init__.py', 'app.py', 'commands.py', 'config.py', 'debounce.py', 'display.py', 'journal.py', 'journal_base.py', 'keystore.py', 'link.py', 'meter.py', 'protocol.py', 'pulse.py', 'rawjournal.py', 'rawlog.py', 'schema.py', 'vocab.py'])
package('boards', files=['__init__.py', 'contract.py', 'selfcheck.py', 'hwboard.py', 'pico.py'])
package('drivers', files=['__init__.py', 'nvfile.py', 'chain.py', 'edges.py', 'heldpin.py', 'max7219.py', 'seg7.py', 'tm1637.py', 'keys.py', 'pio_pulse.py', 'rawflash.py'])

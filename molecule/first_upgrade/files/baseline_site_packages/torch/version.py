# TEST STAND-IN (molecule/first_upgrade): laid out like torch's generated version.py.
__version__ = '2.9.1+cu128'
cuda = '12.8'
STANDIN = True

import FloorVerify

floorMain()
